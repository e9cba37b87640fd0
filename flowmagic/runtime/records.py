"""Record-level constants and formatting shared by the operators."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from flowmagic.vocabulary.types import PICKLED, Row, TypeInformation

__all__ = [
    "BATCH_SIZE",
    "MAX_WATERMARK",
    "MIN_WATERMARK",
    "java_double_string",
    "java_string",
    "java_to_string",
    "printed_string",
]

#: Long.MIN_VALUE / Long.MAX_VALUE: "no watermark yet" and "end of input".
MIN_WATERMARK = -(1 << 63)
MAX_WATERMARK = (1 << 63) - 1

#: Most records a batch carries through a chain. Batches make stateless chains fast, yet a
#: batch's objects (and what a flat map makes of them) must stay in the CPU cache: 256 lines
#: of text ran WordCount twice as fast as the 1 MB blocks they were read in.
BATCH_SIZE = 256


def java_string(value: Any) -> str:
    """``value.toString()`` as Flink prints the Java value a Python record maps to.

    Tuples print as Flink's ``TupleN`` (``(a,1)``), lists as ``java.util.List``
    (``[a, 1]``), dicts as ``java.util.Map`` (``{k=v}``), None as ``null``, booleans as
    ``true``/``false``, floats like ``Double.toString`` for ordinary magnitudes and a
    :class:`~flowmagic.vocabulary.types.Row` as Flink's ``Row`` (``+I[a,1]``, as PyFlink prints it).
    """
    # Printing every update is bound by this function: the usual records (ints, strings and
    # tuples of them) take the shortest way, by exact type (a bool or a str subclass does not).
    kind = type(value)
    if kind is str:
        return value
    if kind is int:
        return str(value)
    if kind is tuple:
        return "(" + ",".join([_SIMPLE[type(v)](v) if type(v) in _SIMPLE else java_string(v) for v in value]) + ")"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, tuple):
        return "(" + ",".join(java_string(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(java_string(v) for v in value) + "]"
    if isinstance(value, Row):
        return value.get_row_kind().short_string + "[" + ",".join(java_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_string(k)}={java_string(v)}" for k, v in value.items()) + "}"
    return str(value)


#: The exact types :func:`java_string` writes as ``str()`` does (``str`` as it is).
_SIMPLE: dict[type, Any] = {int: str, str: str}


def printed_string(value: Any, type_info: TypeInformation | None) -> str:
    """How the print sink writes a record of the declared ``type_info``, as PyFlink's does: a
    record kept pickled (``Types.PICKLED_BYTE_ARRAY()``, PyFlink's default) as
    ``str(record)``, a typed one as the Java value PyFlink converts it to (a tuple declared
    ``Types.ROW(...)`` prints as a Row); an undeclared one as :func:`java_string`."""
    return _typed_string(value, type_info, _PRINTED)


def _java_decimal(digits: str, exponent: int, negative: bool) -> str:
    # digits * 10^exponent (digits without leading zeros), as Double.toString lays it out:
    # plain between 10^-3 and 10^7, else one digit, a point, the rest and E<exponent>.
    scientific = len(digits) + exponent - 1
    digits = digits.rstrip("0") or "0"
    sign = "-" if negative else ""
    if -3 <= scientific < 7:
        if scientific >= 0:
            whole, fraction = digits[: scientific + 1].ljust(scientific + 1, "0"), digits[scientific + 1 :]
        else:
            whole, fraction = "0", "0" * (-scientific - 1) + digits
        return f"{sign}{whole}.{fraction or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{scientific}"


def _java_floating(text: str, value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    sign, digits, exponent = Decimal(text).as_tuple()
    assert isinstance(exponent, int), "a finite value"
    return _java_decimal("".join(map(str, digits)).lstrip("0") or "0", exponent, bool(sign))


def java_double_string(value: float) -> str:
    """``Double.toString(value)``: the shortest digits that read back as ``value``
    (``repr``'s), written as Java writes them (``2.5``, ``1.0E20``, ``1.0E-4``)."""
    return _java_floating(repr(value), value)


def _java_float_string(value: float) -> str:
    # Float.toString: the shortest digits that read back as the same 32-bit float.
    packed = struct.pack(">f", value)
    for precision in range(1, 10):
        text = f"{value:.{precision}g}"
        if struct.pack(">f", float(text)) == packed:
            return _java_floating(text, value)
    return _java_floating(repr(value), value)


def java_to_string(value: Any, type_info: TypeInformation | None) -> str:
    """``toString()`` of the Java value a record of the declared ``type_info`` becomes, as
    Flink's ``SimpleStringEncoder`` writes it: tuples as ``(a,1)``, Rows as ``+I[a, 1]``,
    doubles as ``1.0E20``. A record kept pickled (PyFlink's default type) is written as
    ``str(record)`` (PyFlink writes the Java ``byte[]``'s identity, ``[B@1b2c3d``); one of no
    declared type as :func:`java_string`."""
    return _typed_string(value, type_info, _TO_STRING)


@dataclass(frozen=True)
class _Style:
    """Where the print sink's text (PyFlink's) and Java's ``toString()`` (the FileSink's) differ."""

    #: Between a Row's fields: PyFlink prints ``+I[a,1]``, Java's ``Row.toString`` ``+I[a, 1]``.
    row_separator: str
    #: Java's toString: a null record is ``null``, doubles and floats as Java writes them.
    java_values: bool


_PRINTED = _Style(",", java_values=False)
_TO_STRING = _Style(", ", java_values=True)


def _typed_string(value: Any, type_info: TypeInformation | None, style: _Style) -> str:
    if type_info is None:
        return java_string(value)
    if type_info == PICKLED:
        return str(value)
    if style.java_values and value is None:
        return "null"
    name, fields = type_info.name, type_info.fields

    def text(item: Any, item_type: TypeInformation | None) -> str:
        return _typed_string(item, item_type, style)

    if name.startswith("RowTypeInfo"):
        kind = value.get_row_kind().short_string if isinstance(value, Row) else "+I"
        return kind + "[" + style.row_separator.join(map(text, value, fields)) + "]"
    if name.startswith("TupleTypeInfo"):
        return "(" + ",".join(map(text, value, fields)) + ")"
    if name.startswith("ListTypeInfo"):
        return "[" + ", ".join(text(v, fields[0]) for v in value) + "]"
    if name.startswith("MapTypeInfo"):
        key_type, value_type = fields
        return "{" + ", ".join(f"{text(k, key_type)}={text(v, value_type)}" for k, v in value.items()) + "}"
    if style.java_values and name == "Double":
        return java_double_string(float(value))
    if style.java_values and name == "Float":
        return _java_float_string(float(value))
    return java_string(value)
