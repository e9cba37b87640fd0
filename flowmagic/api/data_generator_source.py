"""Flink's ``DataGeneratorSource`` (``org.apache.flink.connector.datagen.source``), for ``from_source``.

Records ``generator_function(index)`` for the indices 0 to ``count - 1``, split into one
contiguous range per parallel reader as Flink splits its ``NumberSequenceSource`` under it,
at most ``RateLimiterStrategy.per_second(n)`` records per second over all readers. Flink's
source is always bounded; programs that mean "for ever" pass ``Long.MAX_VALUE`` (here
``LONG_MAX``, or ``sys.maxsize``), and flowmagic runs those as unbounded jobs (continuous
mode), as they run in Flink's STREAMING mode.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flowmagic.api.sources import Source
from flowmagic.errors import InvalidArgumentError, InvalidTypeError
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.vocabulary.types import TypeInformation, check_type_info

__all__ = ["LONG_MAX", "DataGeneratorSource", "GeneratorFunction", "RateLimiterStrategy", "datagen_operator"]

#: Java's ``Long.MAX_VALUE``: the count of a generator that does not end.
LONG_MAX = 2**63 - 1


def datagen_operator(
    generator: Callable[..., Any] | None, *, arity: int, count: int | None, rows_per_second: float | None, seed: int
) -> OperatorSpec:
    """The runtime's data generator (``env.from_datagen`` and ``DataGeneratorSource``):
    ``generator(index)``, or ``generator(index, rng)`` when ``arity`` is 2, for the indices
    below ``count`` (None: for ever), at most ``rows_per_second`` over all readers."""
    return OperatorSpec(
        OperatorKind.SOURCE_DATAGEN,
        {"generator": generator, "arity": arity, "count": count, "rows_per_second": rows_per_second, "seed": seed},
    )


class GeneratorFunction:
    """Flink's ``GeneratorFunction``: ``map(index)`` makes record ``index``."""

    def map(self, index: int) -> Any:
        """Record number ``index`` (0, 1, ...)."""
        raise NotImplementedError(f"{type(self).__name__} must define map(index)")


@dataclass(frozen=True)
class RateLimiterStrategy:
    """How fast a source emits (Flink's ``RateLimiterStrategy``): at most
    ``records_per_second`` over all its readers, or as fast as it can (None)."""

    records_per_second: float | None = None

    @staticmethod
    def per_second(records_per_second: float) -> RateLimiterStrategy:
        """At most ``records_per_second`` records a second, shared by the source's readers."""
        if isinstance(records_per_second, bool) or not isinstance(records_per_second, (int, float)):
            raise InvalidTypeError(f"RateLimiterStrategy.per_second expects a number, got {records_per_second!r}")
        if records_per_second <= 0:
            raise InvalidArgumentError(f"recordsPerSecond must be positive, got {records_per_second!r}")
        return RateLimiterStrategy(float(records_per_second))

    @staticmethod
    def no_op() -> RateLimiterStrategy:
        """No limit."""
        return RateLimiterStrategy()


class DataGeneratorSource(Source):
    """``DataGeneratorSource(generator_function, count[, rate_limiter_strategy], type_info)``,
    as Flink's constructors take them; ``generator_function`` is a :class:`GeneratorFunction`
    or any function of the index."""

    def __init__(
        self,
        generator_function: GeneratorFunction | Callable[[int], Any],
        count: int,
        rate_limiter_strategy: RateLimiterStrategy | TypeInformation | None = None,
        type_info: TypeInformation | None = None,
    ):
        if isinstance(rate_limiter_strategy, TypeInformation) and type_info is None:
            rate_limiter_strategy, type_info = None, rate_limiter_strategy
        generate = getattr(generator_function, "map", generator_function)
        if not callable(generate):
            raise InvalidTypeError(
                "DataGeneratorSource expects a GeneratorFunction or a function of the index, "
                f"got {generator_function!r}"
            )
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidArgumentError(f"DataGeneratorSource count must be a non-negative int, got {count!r}")
        if rate_limiter_strategy is not None and not isinstance(rate_limiter_strategy, RateLimiterStrategy):
            raise InvalidTypeError(f"DataGeneratorSource expects a RateLimiterStrategy, got {rate_limiter_strategy!r}")
        check_type_info(type_info, "DataGeneratorSource type_info")
        self.generate = generate
        self.count = count
        self.rate_limiter_strategy = rate_limiter_strategy or RateLimiterStrategy()
        self.type_info = type_info

    def operator_spec(self) -> OperatorSpec:
        return datagen_operator(
            self.generate,
            arity=1,
            count=None if self.count >= LONG_MAX else self.count,
            rows_per_second=self.rate_limiter_strategy.records_per_second,
            seed=0,
        )

    def is_bounded(self) -> bool:
        return self.count < LONG_MAX

    def produced_type(self) -> TypeInformation | None:
        return self.type_info
