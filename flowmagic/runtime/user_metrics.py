"""User metrics: PyFlink's ``runtime_context.get_metrics_group()`` and what it registers.

Each subtask has one :class:`MetricRegistry`; every operator of its chain gets a
:class:`MetricGroup` named after the operator, so a metric is identified as Flink's web UI
lists an operator's metrics: ``<operator name>.<group>...<metric name>`` (``Map.my_counter``).
The reporter reads :meth:`MetricRegistry.values` with the subtask's counters, so user metrics
appear in the live view and in the job's final metrics, per subtask.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from flowmagic.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["Counter", "Distribution", "Gauge", "Meter", "MetricGroup", "MetricRegistry"]


class Counter:
    """``inc(n=1)``, ``dec(n=1)``, ``get_count()``."""

    def __init__(self) -> None:
        self._count = 0

    def inc(self, n: int = 1) -> None:
        self._count += n

    def dec(self, n: int = 1) -> None:
        self._count -= n

    def get_count(self) -> int:
        return self._count

    def report(self) -> Any:
        return self._count


class Gauge:
    """A value read when reported: the user's ``obj()``."""

    def __init__(self, obj: Callable[[], Any]):
        self._obj = obj

    def report(self) -> Any:
        try:
            value = self._obj()
        except Exception as error:
            # A gauge is read on the reporter's schedule, not the task's: a failing one shows
            # its error instead of failing the job.
            return f"{type(error).__name__}: {error}"
        return value if isinstance(value, (int, float, str, bool)) or value is None else str(value)


class Meter:
    """``mark_event(value=1)``, ``get_count()``; reported with its rate per second over the
    last ``time_span_in_seconds`` (Flink's MeterView, measured when reported)."""

    def __init__(self, time_span_in_seconds: int = 60):
        if isinstance(time_span_in_seconds, bool) or not isinstance(time_span_in_seconds, int):
            raise InvalidTypeError(f"meter() time_span_in_seconds must be an int, got {time_span_in_seconds!r}.")
        if time_span_in_seconds <= 0:
            raise InvalidArgumentError("meter() time_span_in_seconds must be positive.")
        self._span = float(time_span_in_seconds)
        self._count = 0
        self._samples: deque[tuple[float, int]] = deque()

    def mark_event(self, value: int = 1) -> None:
        self._count += value

    def get_count(self) -> int:
        return self._count

    def rate(self, now: float) -> float:
        samples = self._samples
        samples.append((now, self._count))
        while len(samples) > 1 and samples[1][0] <= now - self._span:
            samples.popleft()
        first_time, first_count = samples[0]
        elapsed = now - first_time
        return (self._count - first_count) / elapsed if elapsed > 0 else 0.0

    def report(self) -> Any:
        return {"count": self._count, "rate": round(self.rate(time.monotonic()), 3)}


class Distribution:
    """``update(value)``; reported as count, sum, min, max and mean (PyFlink's distribution)."""

    def __init__(self) -> None:
        self._count = 0
        self._sum = 0
        self._min = math.inf
        self._max = -math.inf

    def update(self, value: int) -> None:
        self._count += 1
        self._sum += value
        self._min = min(self._min, value)
        self._max = max(self._max, value)

    def report(self) -> Any:
        if not self._count:
            return {"count": 0, "sum": 0, "min": None, "max": None, "mean": None}
        return {
            "count": self._count,
            "sum": self._sum,
            "min": self._min,
            "max": self._max,
            "mean": self._sum / self._count,
        }


class MetricRegistry:
    """The user metrics of one subtask, by identifier."""

    def __init__(self) -> None:
        self.metrics: dict[str, Counter | Gauge | Meter | Distribution] = {}

    def values(self) -> dict[str, Any]:
        """Every metric's current value (plain JSON data), by identifier."""
        return {name: metric.report() for name, metric in self.metrics.items()}


class MetricGroup:
    """A named scope of metrics (PyFlink's ``MetricGroup``)."""

    def __init__(self, registry: MetricRegistry, scope: tuple[str, ...]):
        self._registry = registry
        self._scope = scope

    def add_group(self, name: str, extra: str | None = None) -> MetricGroup:
        """A subgroup ``name``; with ``extra``, Flink's key-value group ``name.extra``."""
        for part in (name, extra):
            if part is not None and (not isinstance(part, str) or not part):
                raise InvalidArgumentError(f"A metric group name must be a non-empty str, got {part!r}.")
        scope = (*self._scope, name) if extra is None else (*self._scope, name, extra)
        return MetricGroup(self._registry, scope)

    def _register(self, name: str, metric: Any) -> Any:
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError(f"A metric name must be a non-empty str, got {name!r}.")
        identifier = ".".join((*self._scope, name))
        existing = self._registry.metrics.get(identifier)
        if existing is not None:
            if type(existing) is not type(metric):
                raise InvalidArgumentError(
                    f"Name collision: metric {identifier!r} is already registered as a {type(existing).__name__}."
                )
            # Flink keeps the first metric of a name; handing it back keeps counts in one place
            # when open() runs again on the same subtask.
            return existing
        self._registry.metrics[identifier] = metric
        return metric

    def counter(self, name: str) -> Counter:
        return self._register(name, Counter())

    def gauge(self, name: str, obj: Callable[[], Any]) -> None:
        if not callable(obj):
            raise InvalidTypeError(f"gauge() expects a callable returning the value, got {obj!r}.")
        self._register(name, Gauge(obj))

    def meter(self, name: str, time_span_in_seconds: int = 60) -> Meter:
        return self._register(name, Meter(time_span_in_seconds))

    def distribution(self, name: str) -> Distribution:
        return self._register(name, Distribution())
