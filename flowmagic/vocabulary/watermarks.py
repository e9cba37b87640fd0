"""Watermark strategies (Flink's ``WatermarkStrategy``) and watermark generators.

A strategy is plain data for the runtime: how to extract timestamps and which
:class:`WatermarkGenerator` to create for each subtask. As in Flink, the generators of
``for_monotonous_timestamps`` and ``for_bounded_out_of_orderness`` are *periodic*: they only
note timestamps per record and emit a watermark when the runtime asks them to, every
``pipeline.auto-watermark-interval`` (200 ms) of processing time. A generator of your own
(``for_generator``) may also emit from ``on_event``, after any record (*punctuated*).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from flowmagic.errors import InvalidArgumentError, InvalidTypeError
from flowmagic.vocabulary.time import Duration, to_millis

__all__ = [
    "BoundedOutOfOrdernessWatermarks",
    "TimestampAssigner",
    "Watermark",
    "WatermarkGenerator",
    "WatermarkGeneratorContext",
    "WatermarkOutput",
    "WatermarkStrategy",
]

_LONG_MIN = -(1 << 63)


class TimestampAssigner:
    """PyFlink's base of timestamp assigners: ``extract_timestamp(value, record_timestamp)``
    returns the element's event time in milliseconds."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        raise NotImplementedError


@dataclass(frozen=True)
class Watermark:
    """A watermark (Flink's ``Watermark``): no record with a timestamp at or below
    ``timestamp`` is expected any more."""

    timestamp: int

    def get_timestamp(self) -> int:
        return self.timestamp


class WatermarkOutput(Protocol):
    """Where a :class:`WatermarkGenerator` emits (Flink's ``WatermarkOutput``). Watermarks
    that do not advance the current one are dropped."""

    def emit_watermark(self, watermark: Watermark | int) -> None: ...

    def mark_idle(self) -> None: ...

    def mark_active(self) -> None: ...


class WatermarkGeneratorContext(Protocol):
    """What a generator supplier is given (Flink's ``WatermarkGeneratorSupplier.Context``)."""

    def get_metric_group(self) -> Any: ...


class WatermarkGenerator:
    """Generates watermarks from the records' timestamps (Flink's ``WatermarkGenerator``).

    ``on_event`` is called after each record has been emitted downstream; a punctuated
    generator emits from there. ``on_periodic_emit`` is called every
    ``pipeline.auto-watermark-interval`` of processing time; a periodic generator emits from
    there. Subclass it and pass ``lambda context: MyGenerator()`` to
    :meth:`WatermarkStrategy.for_generator`.
    """

    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        """Called for every record, with its event timestamp."""

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        """Called periodically, every ``pipeline.auto-watermark-interval``."""


class BoundedOutOfOrdernessWatermarks(WatermarkGenerator):
    """Flink's periodic generator for records at most ``out_of_orderness_ms`` late: it
    emits the highest timestamp seen, less the bound, less 1 ms."""

    def __init__(self, out_of_orderness_ms: int):
        self.out_of_orderness_ms = out_of_orderness_ms
        # As Flink's: the first periodic emission before any record emits Long.MIN_VALUE.
        self.max_timestamp = _LONG_MIN + out_of_orderness_ms + 1

    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        if event_timestamp > self.max_timestamp:
            self.max_timestamp = event_timestamp

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        output.emit_watermark(self.max_timestamp - self.out_of_orderness_ms - 1)


WatermarkGeneratorSupplier = Callable[[WatermarkGeneratorContext], WatermarkGenerator]


@dataclass(frozen=True)
class WatermarkStrategy:
    """How timestamps are extracted and watermarks generated.

    ``out_of_orderness_ms`` is the bound of ``for_bounded_out_of_orderness`` (0 for monotonous
    timestamps, None for ``no_watermarks`` and for a strategy of your own generator,
    ``generator_supplier``); ``timestamp_assigner(element, previous_ts)`` returns the
    element's event time in milliseconds.
    """

    out_of_orderness_ms: int | None
    timestamp_assigner: Callable[[Any, int], int] | None = None
    idleness_ms: int | None = None
    generator_supplier: WatermarkGeneratorSupplier | None = None

    @classmethod
    def for_monotonous_timestamps(cls) -> WatermarkStrategy:
        return cls(0)

    @classmethod
    def for_bounded_out_of_orderness(cls, max_out_of_orderness: Duration | int) -> WatermarkStrategy:
        millis = to_millis(max_out_of_orderness, "max_out_of_orderness")
        if millis < 0:
            raise InvalidArgumentError("max_out_of_orderness must not be negative")
        return cls(millis)

    @classmethod
    def for_generator(cls, generator_supplier: WatermarkGeneratorSupplier) -> WatermarkStrategy:
        """Watermarks from a generator of your own (Java's ``forGenerator``):
        ``generator_supplier(context)`` returns a new :class:`WatermarkGenerator` for each
        subtask, e.g. ``lambda context: MyGenerator()``."""
        if not callable(generator_supplier):
            raise InvalidTypeError(
                "for_generator() expects a function of a context returning a WatermarkGenerator, "
                f"e.g. lambda context: MyGenerator(); got {generator_supplier!r}"
            )
        return cls(None, generator_supplier=generator_supplier)

    @classmethod
    def no_watermarks(cls) -> WatermarkStrategy:
        return cls(None)

    def with_timestamp_assigner(self, assigner: Callable[[Any, int], int]) -> WatermarkStrategy:
        """Use ``assigner(element, record_timestamp)`` to extract event time."""
        if not callable(assigner) and not hasattr(assigner, "extract_timestamp"):
            raise InvalidTypeError("timestamp assigner must be callable or have extract_timestamp()")
        return replace(self, timestamp_assigner=assigner)

    def with_idleness(self, idle_timeout: Duration | int) -> WatermarkStrategy:
        """Mark a subtask's output idle after ``idle_timeout`` without records (processing
        time), so that downstream watermarks stop waiting for it (Flink's
        ``WatermarksWithIdleness``); its next record makes it active again. Bounded jobs
        never go idle: their input is all there."""
        return replace(self, idleness_ms=to_millis(idle_timeout, "idle_timeout"))

    @property
    def generates_watermarks(self) -> bool:
        return self.out_of_orderness_ms is not None or self.generator_supplier is not None

    def create_watermark_generator(self, context: WatermarkGeneratorContext) -> WatermarkGenerator | None:
        """A new generator for one subtask; None for ``no_watermarks``."""
        if self.generator_supplier is not None:
            generator = self.generator_supplier(context)
            if not callable(getattr(generator, "on_event", None)) or not callable(
                getattr(generator, "on_periodic_emit", None)
            ):
                raise InvalidTypeError(
                    "The watermark generator supplier must return a WatermarkGenerator "
                    f"(with on_event and on_periodic_emit), got {generator!r}"
                )
            return generator
        if self.out_of_orderness_ms is None:
            return None
        return BoundedOutOfOrdernessWatermarks(self.out_of_orderness_ms)
