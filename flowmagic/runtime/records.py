"""Record-level constants and formatting shared by the operators."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["BATCH_SIZE", "MAX_WATERMARK", "MIN_WATERMARK", "java_string"]

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
    ``true``/``false`` and floats like ``Double.toString`` for ordinary magnitudes.
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
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_string(k)}={java_string(v)}" for k, v in value.items()) + "}"
    return str(value)
