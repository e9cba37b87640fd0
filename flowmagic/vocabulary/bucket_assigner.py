"""Which directory under a FileSink's base path a record's part file lies in: Flink's bucket
assigners (``DateTimeBucketAssigner``, ``BasePathBucketAssigner``)."""

from __future__ import annotations

import calendar
import datetime
import re
import zoneinfo
from dataclasses import dataclass

from flowmagic.errors import InvalidArgumentError, InvalidTypeError, UnsupportedFeatureError

__all__ = ["BucketAssigner"]

# Java's DateTimeFormatter letters a bucket format may use, and the field each one prints.
_DATE_FIELDS = {
    "y": "year",
    "u": "year",
    "M": "month",
    "L": "month",
    "d": "day",
    "H": "hour",
    "m": "minute",
    "s": "second",
}
_PATTERN_TOKEN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|[^A-Za-z']+")


def _date_formatter(pattern: str) -> list[tuple[str, int] | str]:
    """``pattern`` (a Java ``DateTimeFormatter`` pattern) as literal text and (letter, width)
    fields, refusing letters flowmagic does not format."""
    parts: list[tuple[str, int] | str] = []
    position = 0
    while position < len(pattern):
        match = _PATTERN_TOKEN.match(pattern, position)
        if match is None:
            raise InvalidArgumentError(f"Pattern ends with an incomplete string literal: {pattern}")
        token = match.group(0)
        position = match.end()
        if token.startswith("'"):
            parts.append("'" if token == "''" else token[1:-1].replace("''", "'"))
        elif match.group(1):
            letter = match.group(1)
            if letter not in _DATE_FIELDS or len(token) > 4:
                raise UnsupportedFeatureError(
                    f"Bucket format {pattern!r}: flowmagic formats the pattern letters y, u, M, L (numbers, or "
                    f"MMM/MMMM as English month names), d, H, m and s, not {token!r}."
                )
            parts.append((letter, len(token)))
        else:
            parts.append(token)
    return parts


def _format_date(parts: list[tuple[str, int] | str], moment: datetime.datetime) -> str:
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        letter, width = part
        value = getattr(moment, _DATE_FIELDS[letter])
        if letter in "ML" and width >= 3:
            out.append((calendar.month_abbr if width == 3 else calendar.month_name)[value])
        elif letter in "yu" and width == 2:
            out.append(f"{value % 100:02d}")
        else:
            out.append(f"{value:0{width}d}")
    return "".join(out)


@dataclass(frozen=True)
class BucketAssigner:
    """Which directory under the base path a record's part file lies in.

    ``date_time_bucket_assigner`` (the default) names it after the processing time the
    record is written at, formatted with a Java ``DateTimeFormatter`` pattern in
    ``timezone_id`` (the machine's zone when None); ``base_path_bucket_assigner`` writes in
    the base path itself.
    """

    date_format: str | None = "yyyy-MM-dd--HH"
    timezone_id: str | None = None

    @staticmethod
    def base_path_bucket_assigner() -> BucketAssigner:
        """Part files directly in the base path."""
        return BucketAssigner(None)

    @staticmethod
    def date_time_bucket_assigner(format_str: str = "yyyy-MM-dd--HH", timezone_id: str | None = None) -> BucketAssigner:
        """Part files in one directory per ``format_str`` of the processing time."""
        if not isinstance(format_str, str):
            raise InvalidTypeError(f"format_str must be a string, got {format_str!r}")
        _date_formatter(format_str)
        if timezone_id is not None:
            try:
                zoneinfo.ZoneInfo(timezone_id)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError) as error:
                raise InvalidArgumentError(f"Unknown time-zone ID: {timezone_id}") from error
        return BucketAssigner(format_str, timezone_id)

    def bucket_id(self, processing_time_ms: int) -> str:
        """The bucket (a relative directory, "" for the base path) of a record written at
        ``processing_time_ms``."""
        if self.date_format is None:
            return ""
        zone = zoneinfo.ZoneInfo(self.timezone_id) if self.timezone_id is not None else None
        moment = datetime.datetime.fromtimestamp(processing_time_ms / 1000, zone)
        return _format_date(_date_formatter(self.date_format), moment)
