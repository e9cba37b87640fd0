"""SQL values at run time: Flink's types read from their type strings, and values written as
Flink writes them (CAST to STRING, the SQL client's tableau cells, a Row's ``toString``).

Values are plain Python objects: integers ``int``, DECIMAL ``decimal.Decimal`` at its scale,
DOUBLE/FLOAT ``float``, strings ``str``, BOOLEAN ``bool``, TIMESTAMP and TIMESTAMP_LTZ ``int``
epoch milliseconds (a TIMESTAMP's as if at UTC), DATE ``int`` days, NULL ``None``.
"""

from __future__ import annotations

import datetime
import re
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from flowmagic.runtime.records import java_double_string

__all__ = [
    "MILLIS_PER_DAY",
    "SqlTypeInfo",
    "external_value",
    "parse_date",
    "parse_timestamp",
    "parse_type",
    "row_string",
    "value_string",
    "zone_of",
]

_TYPE = re.compile(r"^\s*([A-Z_]+(?: WITH LOCAL TIME ZONE)?)\s*(?:\((\d+)(?:,\s*(\d+))?\))?(.*)$")
_EPOCH = datetime.datetime(1970, 1, 1)
#: A DATE is held as days since the epoch, a timestamp as milliseconds.
MILLIS_PER_DAY = 86_400_000


class SqlTypeInfo:
    """A Flink type string read: its root name, precision, scale and nullability."""

    __slots__ = ("name", "nullable", "precision", "scale", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        match = _TYPE.match(text.upper())
        if match is None:
            raise ValueError(f"not a Flink type: {text!r}")
        name, precision, scale, rest = match.groups()
        self.name = {"INTEGER": "INT", "TIMESTAMP WITH LOCAL TIME ZONE": "TIMESTAMP_LTZ"}.get(name, name)
        self.nullable = "NOT NULL" not in rest
        self.precision = int(precision) if precision is not None else None
        self.scale = int(scale) if scale is not None else None

    @property
    def is_timestamp(self) -> bool:
        return self.name in ("TIMESTAMP", "TIMESTAMP_LTZ", "TIMESTAMP_WITH_LOCAL_TIME_ZONE")


_PARSED: dict[str, SqlTypeInfo] = {}


def parse_type(text: str) -> SqlTypeInfo:
    """The type a Flink type string names (cached: operators ask once per field)."""
    found = _PARSED.get(text)
    if found is None:
        found = _PARSED[text] = SqlTypeInfo(text)
    return found


def zone_of(name: str) -> datetime.tzinfo | None:
    """The time zone ``table.local-time-zone`` names (``default``: this machine's)."""
    found = _ZONES.get(name)
    if found is None:
        found = _ZONES[name] = datetime.datetime.now().astimezone().tzinfo if name == "default" else ZoneInfo(name)
    return found


_ZONES: dict[str, datetime.tzinfo | None] = {"UTC": None}


def _timestamp_string(millis: int, precision: int, zone: str | None = None) -> str:
    moment = _EPOCH + datetime.timedelta(milliseconds=millis)
    tz = zone_of(zone) if zone is not None else None
    if tz is not None:
        moment = moment.replace(tzinfo=datetime.UTC).astimezone(tz).replace(tzinfo=None)
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    if precision > 0:
        fraction = f"{moment.microsecond:06d}"[:3].ljust(precision, "0")[:precision]
        text += "." + fraction
    return text


def value_string(value: Any, type_text: str, zone: str = "UTC") -> str:
    """``value`` of type ``type_text`` CAST to STRING, as Flink writes it (a TIMESTAMP_LTZ in
    the session's time ``zone``); NULL is None's business of the caller (the tableau writes
    ``<NULL>``, a Row ``null``)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return java_double_string(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, int):
        info = parse_type(type_text)
        if info.is_timestamp:
            local = zone if info.name != "TIMESTAMP" else None
            return _timestamp_string(value, 3 if info.precision is None else info.precision, local)
        if info.name == "DATE":
            return (datetime.date(1970, 1, 1) + datetime.timedelta(days=value)).isoformat()
        return str(value)
    return str(value)


def row_string(kind: str, values: tuple[Any, ...], types: tuple[str, ...], zone: str = "UTC") -> str:
    """Java's ``Row.toString`` of a SQL row (Flink's print sink): ``+I[1, a, null]``."""
    cells = ["null" if v is None else _row_value(v, t, zone) for v, t in zip(values, types, strict=True)]
    return f"{kind}[{', '.join(cells)}]"


def _row_value(value: Any, type_text: str, zone: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and parse_type(type_text).is_timestamp:
        # Java's Instant/LocalDateTime toString: ISO with a T.
        return value_string(value, type_text, zone).replace(" ", "T")
    return value_string(value, type_text, zone)


def parse_timestamp(text: str) -> int:
    """``yyyy-MM-dd[ HH:mm:ss[.fff]]`` (or with a ``T``) as epoch milliseconds, read as UTC."""
    moment = datetime.datetime.fromisoformat(text.strip().replace(" ", "T"))
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.UTC).replace(tzinfo=None)
    return (moment - _EPOCH) // datetime.timedelta(milliseconds=1)


def parse_date(text: str) -> int:
    """``yyyy-MM-dd`` as days since the epoch."""
    return (datetime.date.fromisoformat(text.strip()) - _EPOCH.date()).days


def external_value(value: Any, type_text: str) -> Any:
    """``value`` of type ``type_text`` as PyFlink hands it to Python (``TableResult.collect()``,
    ``to_data_stream``): a TIMESTAMP as a naive ``datetime`` of its fields, a TIMESTAMP_LTZ as
    a naive ``datetime`` in this process's local time zone (``datetime.fromtimestamp``), a
    DATE as a ``date``; other values as they are."""
    if value is None or isinstance(value, bool) or not isinstance(value, int):
        return value
    info = parse_type(type_text)
    if info.name == "TIMESTAMP":
        return _EPOCH + datetime.timedelta(milliseconds=value)
    if info.is_timestamp:
        seconds, millis = divmod(value, 1000)
        return datetime.datetime.fromtimestamp(seconds).replace(microsecond=millis * 1000)
    if info.name == "DATE":
        return _EPOCH.date() + datetime.timedelta(days=value)
    return value
