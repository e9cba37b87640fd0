"""Flink's aggregate functions over accumulators: COUNT, COUNT(*), SUM, $SUM0, MIN, MAX, AVG,
each with retraction and DISTINCT, and merging (the batch global phase).

An accumulator is a small mutable list (or a number for the counts), so that a group's
accumulators pickle as plain data into checkpoints. Results follow Flink's types: SUM and
AVG of integers keep the argument's type (AVG divides toward zero), of DECIMAL are rounded
half-up to the result's scale; SUM of nothing is NULL, $SUM0 of nothing 0.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

from flowmagic.errors import JobError
from flowmagic.graph.sql_runtime import AggCallSpec
from flowmagic.runtime.sql.values import parse_type

__all__ = ["AggregateFunction", "aggregate_function"]

_CONTEXT = Context(prec=120, rounding=ROUND_HALF_UP)
_INTEGER_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}


def _wrapper(type_text: str | None) -> Any:
    info = parse_type(type_text) if type_text else None
    bits = _INTEGER_BITS.get(info.name) if info is not None else None
    if bits is None:
        return None
    half, full = 1 << (bits - 1), (1 << bits) - 1
    return lambda value: ((value + half) & full) - half


class AggregateFunction:
    """One aggregate call's accumulator operations (Flink's AggregateFunction with
    ``retract`` and ``merge``)."""

    def __init__(self, spec: AggCallSpec):
        self.spec = spec
        self.arg = spec.args[0] if spec.args else None

    def create(self) -> Any:
        raise NotImplementedError

    def add(self, acc: Any, value: Any) -> Any:
        raise NotImplementedError

    def retract(self, acc: Any, value: Any) -> Any:
        raise NotImplementedError

    def merge(self, acc: Any, other: Any) -> Any:
        raise NotImplementedError

    def value(self, acc: Any) -> Any:
        raise NotImplementedError


class Count(AggregateFunction):
    """COUNT(*) (every row) or COUNT(x) (rows where x is not null): a number."""

    def create(self) -> Any:
        return 0

    def add(self, acc: Any, value: Any) -> Any:
        return acc + 1

    def retract(self, acc: Any, value: Any) -> Any:
        return acc - 1

    def merge(self, acc: Any, other: Any) -> Any:
        return acc + other

    def value(self, acc: Any) -> Any:
        return acc


class Sum(AggregateFunction):
    """SUM / $SUM0: ``[sum, non-null count]``."""

    def __init__(self, spec: AggCallSpec):
        super().__init__(spec)
        self.wrap = _wrapper(spec.result_type)
        info = parse_type(spec.result_type)
        self.decimal = info.name == "DECIMAL"
        self.zero: Any = Decimal(0) if self.decimal else 0.0 if info.name in ("DOUBLE", "FLOAT") else 0
        self.or_zero = spec.function == "$SUM0"

    def create(self) -> Any:
        return [self.zero, 0]

    def add(self, acc: Any, value: Any) -> Any:
        acc[0] += value
        acc[1] += 1
        return acc

    def retract(self, acc: Any, value: Any) -> Any:
        acc[0] -= value
        acc[1] -= 1
        return acc

    def merge(self, acc: Any, other: Any) -> Any:
        acc[0] += other[0]
        acc[1] += other[1]
        return acc

    def value(self, acc: Any) -> Any:
        if acc[1] == 0 and not self.or_zero:
            return None
        total = acc[0]
        return self.wrap(total) if self.wrap is not None else total


class Avg(Sum):
    """AVG: ``[sum, count]``, divided as the result type divides."""

    def __init__(self, spec: AggCallSpec):
        super().__init__(spec)
        info = parse_type(spec.result_type)
        self.scale = Decimal(1).scaleb(-(info.scale or 0)) if info.name == "DECIMAL" else None
        self.floating = info.name in ("DOUBLE", "FLOAT")

    def value(self, acc: Any) -> Any:
        total, count = acc
        if count == 0:
            return None
        if self.scale is not None:
            return _CONTEXT.divide(Decimal(total), Decimal(count)).quantize(self.scale, rounding=ROUND_HALF_UP)
        if self.floating:
            return total / count
        quotient = abs(total) // count
        value = quotient if total >= 0 else -quotient
        return self.wrap(value) if self.wrap is not None else value


class Extreme(AggregateFunction):
    """MIN / MAX: ``{value: count}`` when the input retracts, else the value itself in a list."""

    def __init__(self, spec: AggCallSpec, retracting: bool):
        super().__init__(spec)
        self.pick = min if spec.function == "MIN" else max
        self.retracting = retracting

    def create(self) -> Any:
        return {} if self.retracting else [None]

    def add(self, acc: Any, value: Any) -> Any:
        if self.retracting:
            acc[value] = acc.get(value, 0) + 1
        elif acc[0] is None:
            acc[0] = value
        else:
            acc[0] = self.pick(acc[0], value)
        return acc

    def retract(self, acc: Any, value: Any) -> Any:
        if not self.retracting:
            raise JobError(f"{self.spec.function} received a retraction on an insert-only input")
        left = acc.get(value, 0) - 1
        if left > 0:
            acc[value] = left
        else:
            acc.pop(value, None)
        return acc

    def merge(self, acc: Any, other: Any) -> Any:
        if self.retracting:
            for value, count in other.items():
                acc[value] = acc.get(value, 0) + count
            return acc
        if other[0] is not None:
            self.add(acc, other[0])
        return acc

    def value(self, acc: Any) -> Any:
        if self.retracting:
            return self.pick(acc) if acc else None
        return acc[0]


class Distinct(AggregateFunction):
    """``f(DISTINCT x)``: ``[{value: count}, inner accumulator]``; the inner function sees a
    value when it first comes and when it last goes."""

    def __init__(self, spec: AggCallSpec, inner: AggregateFunction):
        super().__init__(spec)
        self.inner = inner

    def create(self) -> Any:
        return [{}, self.inner.create()]

    def add(self, acc: Any, value: Any) -> Any:
        seen = acc[0]
        count = seen.get(value, 0)
        seen[value] = count + 1
        if count == 0:
            acc[1] = self.inner.add(acc[1], value)
        return acc

    def retract(self, acc: Any, value: Any) -> Any:
        seen = acc[0]
        count = seen.get(value, 0)
        if count <= 1:
            seen.pop(value, None)
            if count == 1:
                acc[1] = self.inner.retract(acc[1], value)
        else:
            seen[value] = count - 1
        return acc

    def merge(self, acc: Any, other: Any) -> Any:
        for value, count in other[0].items():
            for _ in range(count):
                self.add(acc, value)
        return acc

    def value(self, acc: Any) -> Any:
        return self.inner.value(acc[1])


def aggregate_function(spec: AggCallSpec, retracting: bool) -> AggregateFunction:
    """The function of an aggregate call (``retracting``: its input may retract)."""
    name = spec.function
    function: AggregateFunction
    if name == "COUNT":
        function = Count(spec)
    elif name in ("SUM", "$SUM0"):
        function = Sum(spec)
    elif name == "AVG":
        function = Avg(spec)
    elif name in ("MIN", "MAX"):
        function = Extreme(spec, retracting or spec.distinct)
    else:
        raise JobError(f"flowmagic cannot run the aggregate function {name} yet")
    return Distinct(spec, function) if spec.distinct and name not in ("MIN", "MAX") else function
