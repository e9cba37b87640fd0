"""Flink SQL's built-in functions and operators with Flink's semantics, the namespace the
generated code of :mod:`flowmagic.sql.codegen` runs in.

Null in, null out (but for the three-valued AND/OR and the null-aware functions); integer
arithmetic wraps at its type's width and divides toward zero, as Java's; DECIMAL results are
rounded half-up to the scale the planner derived, and are null past their precision; DOUBLE
arithmetic is IEEE's (a division by zero is an infinity, as in Java).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any

from flowmagic.errors import JobError
from flowmagic.runtime.sql.values import MILLIS_PER_DAY, parse_date, parse_timestamp, parse_type, value_string

__all__ = ["namespace"]

#: Wide enough for DECIMAL(38, s) operands and products before rounding to the result's scale.
_CONTEXT = Context(prec=120, rounding=ROUND_HALF_UP)
_SCALES = [Decimal(1).scaleb(-s) for s in range(0, 40)]


def _wrap(bits: int) -> Callable[[int], int]:
    half, full = 1 << (bits - 1), (1 << bits) - 1

    def wrap(value: int) -> int:
        return ((value + half) & full) - half

    return wrap


_wrap8, _wrap16, _wrap32, _wrap64 = _wrap(8), _wrap(16), _wrap(32), _wrap(64)
_WRAPS = {8: _wrap8, 16: _wrap16, 32: _wrap32, 64: _wrap64}


def _nullable(function: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def apply(left: Any, right: Any) -> Any:
        if left is None or right is None:
            return None
        return function(left, right)

    return apply


def _integer(function: Callable[[int, int], int], bits: int) -> Callable[[Any, Any], Any]:
    wrap = _WRAPS[bits]

    def apply(left: Any, right: Any) -> Any:
        if left is None or right is None:
            return None
        return wrap(function(left, right))

    return apply


def _negate(value: Any) -> Any:
    return None if value is None else -value


def _negate_integer(bits: int) -> Callable[[Any], Any]:
    wrap = _WRAPS[bits]
    return lambda value: None if value is None else wrap(-value)


def _divide_integer(bits: int) -> Callable[[Any, Any], Any]:
    wrap = _WRAPS[bits]

    def divide(left: Any, right: Any) -> Any:
        if left is None or right is None:
            return None
        if right == 0:
            raise ArithmeticError("/ by zero")
        quotient = abs(left) // abs(right)
        return wrap(quotient if (left < 0) == (right < 0) else -quotient)

    return divide


def _fdiv(left: Any, right: Any) -> Any:
    if left is None or right is None:
        return None
    try:
        return left / right
    except ZeroDivisionError:
        if left == 0 or math.isnan(left):
            return math.nan
        return math.copysign(math.inf, left) * math.copysign(1.0, right)


def _mod(left: Any, right: Any) -> Any:
    """Java's remainder: the sign of the dividend."""
    if left is None or right is None:
        return None
    if isinstance(left, int) and isinstance(right, int):
        if right == 0:
            raise ArithmeticError("/ by zero")
        remainder = abs(left) % abs(right)
        return -remainder if left < 0 else remainder
    if isinstance(left, float) or isinstance(right, float):
        return math.fmod(left, right)
    return _CONTEXT.remainder(Decimal(left), Decimal(right))


def _fit(value: Decimal, precision: int, scale: int) -> Decimal | None:
    """``value`` rounded half-up to ``scale``; None when it needs more than ``precision`` digits."""
    rounded = value.quantize(_SCALES[scale], rounding=ROUND_HALF_UP, context=_CONTEXT)
    if rounded.adjusted() + 1 > precision - scale and rounded != 0:
        return None
    return rounded


def _decimal(function: Callable[[Decimal, Decimal], Decimal]) -> Callable[[Any, Any, int, int], Any]:
    def apply(left: Any, right: Any, precision: int, scale: int) -> Any:
        if left is None or right is None:
            return None
        return _fit(function(Decimal(left), Decimal(right)), precision, scale)

    return apply


def _decimal_divide(left: Any, right: Any, precision: int, scale: int) -> Any:
    if left is None or right is None:
        return None
    if right == 0:
        raise ArithmeticError("Division by zero")
    return _fit(_CONTEXT.divide(Decimal(left), Decimal(right)), precision, scale)


def _cmp(left: Any, right: Any, compare: Callable[[Any, Any], bool]) -> bool | None:
    if left is None or right is None:
        return None
    return compare(left, right)


def _and(*values: Any) -> bool | None:
    """Three-valued AND: false wins, then null."""
    unknown = False
    for value in values:
        if value is False:
            return False
        if value is None:
            unknown = True
    return None if unknown else True


def _or(*values: Any) -> bool | None:
    """Three-valued OR: true wins, then null."""
    unknown = False
    for value in values:
        if value is True:
            return True
        if value is None:
            unknown = True
    return None if unknown else False


def _not(value: Any) -> bool | None:
    return None if value is None else not value


def _coalesce(*values: Any) -> Any:
    for value in values:
        if value is not None:
            return value
    return None


def _concat(*values: Any) -> str | None:
    if any(v is None for v in values):
        return None
    return "".join(values)


def _concat_ws(separator: Any, *values: Any) -> str | None:
    if separator is None:
        return None
    return separator.join(v for v in values if v is not None)


def _trim(value: Any, characters: Any, side: str) -> str | None:
    if value is None or characters is None:
        return None
    if side == "LEADING":
        return value.lstrip(characters)
    if side == "TRAILING":
        return value.rstrip(characters)
    return value.strip(characters)


def _upper(value: Any) -> str | None:
    return None if value is None else value.upper()


def _lower(value: Any) -> str | None:
    return None if value is None else value.lower()


def _char_length(value: Any) -> int | None:
    return None if value is None else len(value)


def _substring(value: Any, start: Any, length: Any = -1) -> str | None:
    """SQL's 1-based SUBSTRING; a negative start counts from the end, as Flink's."""
    if value is None or start is None or length is None:
        return None
    if length != -1 and length < 0:
        raise ArithmeticError(f"length of SUBSTRING must not be negative: {length}")
    if start > 0:
        begin = start - 1
    elif start == 0:
        begin = 0
    else:
        begin = max(len(value) + start, 0)
    return value[begin:] if length == -1 else value[begin : begin + length]


def _replace(value: Any, search: Any, replacement: Any) -> str | None:
    if value is None or search is None or replacement is None:
        return None
    return value.replace(search, replacement)


def _pad_with(left: bool) -> Callable[[Any, Any, Any], Any]:
    def pad(value: Any, length: Any, padding: Any) -> str | None:
        if value is None or length is None or padding is None or length < 0:
            return None
        if length <= len(value):
            return value[:length]
        if not padding:
            return None
        fill = (padding * length)[: length - len(value)]
        return fill + value if left else value + fill

    return pad


def _like(value: Any, pattern: Any) -> bool | None:
    if value is None or pattern is None:
        return None
    return _like_pattern(pattern).fullmatch(value) is not None


_LIKE_PATTERNS: dict[str, re.Pattern[str]] = {}


def _like_pattern(pattern: str) -> re.Pattern[str]:
    found = _LIKE_PATTERNS.get(pattern)
    if found is None:
        parts = ["." if c == "_" else ".*" if c == "%" else re.escape(c) for c in pattern]
        found = _LIKE_PATTERNS[pattern] = re.compile("".join(parts), re.S)
    return found


def _round(value: Any, digits: Any, result_type: str) -> Any:
    if value is None or digits is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if digits >= 0:
            return value
        return int(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return value
        return float(Decimal(repr(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
    info = parse_type(result_type)
    rounded = value.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP, context=_CONTEXT)
    return _fit(rounded, info.precision or 38, info.scale or 0)


def _abs(value: Any) -> Any:
    return None if value is None else abs(value)


def _floor(value: Any) -> Any:
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return float(math.floor(value))
    return value.to_integral_value(rounding=ROUND_FLOOR)


def _ceil(value: Any) -> Any:
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return float(math.ceil(value))
    return value.to_integral_value(rounding=ROUND_CEILING)


def _to_timestamp_ltz(value: Any, precision: Any) -> int | None:
    """TO_TIMESTAMP_LTZ(epoch, precision): seconds (0) or milliseconds (3) since the epoch."""
    if value is None or precision is None:
        return None
    if precision == 0:
        return int(value * 1000)
    if precision == 3:
        return int(value)
    raise ArithmeticError(f"The precision value '{precision}' for function TO_TIMESTAMP_LTZ is unsupported")


def _float(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        return float(value.strip())
    return float(value)


def _to_string(value: Any, source_type: str, zone: str = "UTC") -> str | None:
    return None if value is None else value_string(value, source_type, zone)


def _pad(value: Any, length: int) -> str | None:
    return None if value is None else value[:length].ljust(length)


def _cut(value: Any, length: int) -> str | None:
    return None if value is None else value[:length]


def _to_int(value: Any, bits: int) -> int | None:
    """CAST to an integer type: a DECIMAL or DOUBLE truncated (Java's narrowing), a string parsed."""
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        try:
            return _WRAPS[bits](int(value.strip()))
        except ValueError:
            raise ArithmeticError(f"Could not parse '{value}' as an integer (CAST)") from None
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        limit = 1 << (bits - 1) if bits >= 32 else 1 << 31
        truncated = (
            max(-limit, min(limit - 1, int(value))) if not math.isinf(value) else (limit - 1 if value > 0 else -limit)
        )
        return _WRAPS[bits](truncated)
    return _WRAPS[bits](int(value))


def _to_decimal(value: Any, precision: int, scale: int) -> Decimal | None:
    if value is None:
        return None
    try:
        number = (
            Decimal(value.strip())
            if isinstance(value, str)
            else Decimal(repr(value) if isinstance(value, float) else value)
        )
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    return _fit(number, precision, scale)


def _to_boolean(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "t", "yes", "y", "1"):
            return True
        if text in ("false", "f", "no", "n", "0"):
            return False
        return None
    return value != 0


def _to_timestamp(value: Any, source_type: str) -> int | None:
    """CAST to a TIMESTAMP (or between the timestamp types): epoch milliseconds (a DATE's
    midnight)."""
    if value is None:
        return None
    if isinstance(value, int):
        return value * MILLIS_PER_DAY if parse_type(source_type).name == "DATE" else value
    if isinstance(value, str):
        return parse_timestamp(value)
    raise JobError(f"flowmagic cannot CAST a {source_type} to a timestamp yet")


def _to_date(value: Any, source_type: str) -> int | None:
    """CAST to a DATE: days since the epoch (a timestamp's date part, a string's date)."""
    if value is None:
        return None
    if isinstance(value, str):
        return parse_date(value)
    if isinstance(value, int):
        return value if parse_type(source_type).name == "DATE" else value // MILLIS_PER_DAY
    raise JobError(f"flowmagic cannot CAST a {source_type} to a date yet")


def _search(value: Any, ranges: tuple[tuple[Any, bool, Any, bool], ...]) -> bool | None:
    """Calcite's SEARCH: whether ``value`` lies in one of the ranges (None below/above: unbounded)."""
    if value is None:
        return None
    for low, low_inclusive, high, high_inclusive in ranges:
        if low is not None and (value < low or (value == low and not low_inclusive)):
            continue
        if high is not None and (value > high or (value == high and not high_inclusive)):
            continue
        return True
    return False


def namespace(proctime: Callable[[], int]) -> dict[str, Any]:
    """The globals generated code runs with; ``proctime`` is the operator's processing time."""
    names: dict[str, Any] = {
        "_proctime": proctime,
        "_search": _search,
        "_float": _float,
        "_negate": _negate,
        "_mod": _mod,
        "_fdiv": _fdiv,
        "_cmp": _cmp,
        "_and": _and,
        "_or": _or,
        "_not": _not,
        "_coalesce": _coalesce,
        "_concat": _concat,
        "_concat_ws": _concat_ws,
        "_trim": _trim,
        "_upper": _upper,
        "_lower": _lower,
        "_char_length": _char_length,
        "_substring": _substring,
        "_replace": _replace,
        "_lpad": _pad_with(True),
        "_rpad": _pad_with(False),
        "_like": _like,
        "_round": _round,
        "_abs": _abs,
        "_floor": _floor,
        "_ceil": _ceil,
        "_to_timestamp_ltz": _to_timestamp_ltz,
        "_to_string": _to_string,
        "_pad": _pad,
        "_cut": _cut,
        "_to_int": _to_int,
        "_to_decimal": _to_decimal,
        "_to_boolean": _to_boolean,
        "_to_timestamp": _to_timestamp,
        "_to_date": _to_date,
        "_decimal_add": _decimal(_CONTEXT.add),
        "_decimal_sub": _decimal(_CONTEXT.subtract),
        "_decimal_mul": _decimal(_CONTEXT.multiply),
        "_decimal_divide": _decimal_divide,
        "_add": _nullable(operator.add),
        "_sub": _nullable(operator.sub),
        "_mul": _nullable(operator.mul),
        "_eq": operator.eq,
        "_ne": operator.ne,
        "_lt": operator.lt,
        "_gt": operator.gt,
        "_le": operator.le,
        "_ge": operator.ge,
    }
    for bits, wrap in _WRAPS.items():
        names[f"_wrap{bits}"] = wrap
        names[f"_add{bits}"] = _integer(operator.add, bits)
        names[f"_sub{bits}"] = _integer(operator.sub, bits)
        names[f"_mul{bits}"] = _integer(operator.mul, bits)
        names[f"_neg{bits}"] = _negate_integer(bits)
        names[f"_idiv{bits}"] = _divide_integer(bits)
    return names
