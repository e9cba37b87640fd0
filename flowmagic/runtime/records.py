"""Record-level constants and formatting shared by the operators."""

from __future__ import annotations

import math
from typing import Any

from flowmagic.api.types import PICKLED, Row, TypeInformation

__all__ = ["BATCH_SIZE", "MAX_WATERMARK", "MIN_WATERMARK", "java_string", "printed_string"]

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
    :class:`~flowmagic.api.types.Row` as Flink's ``Row`` (``+I[a,1]``, as PyFlink prints it).
    """
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


def printed_string(value: Any, type_info: TypeInformation | None) -> str:
    """How the print sink writes a record of the declared ``type_info``, as PyFlink's does: a
    record kept pickled (``Types.PICKLED_BYTE_ARRAY()``, PyFlink's default) as
    ``str(record)``, a typed one as the Java value PyFlink converts it to (a tuple declared
    ``Types.ROW(...)`` prints as a Row); an undeclared one as :func:`java_string`."""
    if type_info is None:
        return java_string(value)
    if type_info == PICKLED:
        return str(value)
    name, fields = type_info.name, type_info.fields
    if name.startswith("RowTypeInfo"):
        kind = value.get_row_kind().short_string if isinstance(value, Row) else "+I"
        return kind + "[" + ",".join(map(printed_string, value, fields)) + "]"
    if name.startswith("TupleTypeInfo"):
        return "(" + ",".join(map(printed_string, value, fields)) + ")"
    if name.startswith("ListTypeInfo"):
        return "[" + ", ".join(printed_string(v, fields[0]) for v in value) + "]"
    if name.startswith("MapTypeInfo"):
        key_type, value_type = fields
        return (
            "{"
            + ", ".join(f"{printed_string(k, key_type)}={printed_string(v, value_type)}" for k, v in value.items())
            + "}"
        )
    return java_string(value)
