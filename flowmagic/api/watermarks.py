"""Watermark strategies (Flink's ``WatermarkStrategy``), as plain data for the runtime."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from flowmagic.api.time import Duration, to_millis
from flowmagic.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["TimestampAssigner", "WatermarkStrategy"]


class TimestampAssigner:
    """PyFlink's base of timestamp assigners: ``extract_timestamp(value, record_timestamp)``
    returns the element's event time in milliseconds."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        raise NotImplementedError


@dataclass(frozen=True)
class WatermarkStrategy:
    """How timestamps are extracted and watermarks generated.

    ``out_of_orderness_ms`` is the bound of ``for_bounded_out_of_orderness`` (0 for monotonous
    timestamps, None for ``no_watermarks``); ``timestamp_assigner(element, previous_ts)``
    returns the element's event time in milliseconds.
    """

    out_of_orderness_ms: int | None
    timestamp_assigner: Callable[[Any, int], int] | None = None
    idleness_ms: int | None = None

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
        return self.out_of_orderness_ms is not None
