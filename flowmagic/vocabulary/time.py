"""Time spans for windows and watermarks: Flink's ``Time`` (1.x) and ``Duration`` (2.x)."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from flowmagic.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["Duration", "Time", "to_millis", "to_millis_text"]


def _amount(value: float, unit: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTypeError(f"a time span in {unit} must be a number, got {value!r}")
    return value


@dataclass(frozen=True)
class Duration:
    """A span of time in milliseconds, built like ``java.time.Duration``."""

    millis: int

    @classmethod
    def of_millis(cls, millis: int) -> Duration:
        return cls(int(_amount(millis, "milliseconds")))

    @classmethod
    def of_seconds(cls, seconds: float) -> Duration:
        return cls(round(_amount(seconds, "seconds") * 1000))

    @classmethod
    def of_minutes(cls, minutes: float) -> Duration:
        return cls(round(_amount(minutes, "minutes") * 60_000))

    @classmethod
    def of_hours(cls, hours: float) -> Duration:
        return cls(round(_amount(hours, "hours") * 3_600_000))

    @classmethod
    def of_days(cls, days: float) -> Duration:
        return cls(round(_amount(days, "days") * 86_400_000))

    @classmethod
    def zero(cls) -> Duration:
        return cls(0)

    def to_milliseconds(self) -> int:
        return self.millis


class Time(Duration):
    """Flink 1.x's ``Time``: ``Time.seconds(5)`` is 5,000 ms."""

    @classmethod
    def milliseconds(cls, millis: int) -> Time:
        return cls(int(_amount(millis, "milliseconds")))

    @classmethod
    def seconds(cls, seconds: float) -> Time:
        return cls(round(_amount(seconds, "seconds") * 1000))

    @classmethod
    def minutes(cls, minutes: float) -> Time:
        return cls(round(_amount(minutes, "minutes") * 60_000))

    @classmethod
    def hours(cls, hours: float) -> Time:
        return cls(round(_amount(hours, "hours") * 3_600_000))

    @classmethod
    def days(cls, days: float) -> Time:
        return cls(round(_amount(days, "days") * 86_400_000))


_UNITS = {
    "": 1, "ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "min": 60_000, "m": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}  # fmt: skip


def to_millis_text(text: str, what: str) -> int:
    """Milliseconds of a duration as Flink's configuration writes it (``"10 s"``, ``"500"``, ``"1min"``)."""
    match = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", str(text))
    if match is None or match.group(2).lower() not in _UNITS:
        raise InvalidArgumentError(f"{what}: could not parse duration {text!r} (use e.g. '10 s', '500 ms', '1 min')")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def to_millis(span: Duration | datetime.timedelta | int, what: str = "time span") -> int:
    """Milliseconds of a ``Time``/``Duration``, a ``timedelta`` or a plain int (ms)."""
    if isinstance(span, Duration):
        return span.millis
    if isinstance(span, datetime.timedelta):
        return round(span.total_seconds() * 1000)
    if isinstance(span, int) and not isinstance(span, bool):
        return span
    raise InvalidTypeError(f"{what} must be a Time, Duration, timedelta or milliseconds as int, got {span!r}")
