"""Row expressions (Calcite's RexNode): input references, literals, calls and OVER calls.

Plain data: printing is the printers' business (``digest``, ``exec_description``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from flowmagic.sql.types import SqlType


@dataclass(frozen=True)
class Rex:
    type: SqlType


@dataclass(frozen=True)
class InputRef(Rex):
    index: int


@dataclass(frozen=True)
class Literal(Rex):
    """A literal; ``value`` is an int, a Decimal string, a str, a bool or None. Interval literals
    hold milliseconds (or months), as Calcite does."""

    value: object


@dataclass(frozen=True)
class Call(Rex):
    operator: str
    operands: tuple[Rex, ...] = ()


@dataclass(frozen=True)
class OrderKey:
    expression: Rex
    descending: bool = False
    nulls_last: bool = False


@dataclass(frozen=True)
class Over(Rex):
    """A window function call: ``ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...)``."""

    operator: str
    operands: tuple[Rex, ...] = ()
    partition: tuple[Rex, ...] = ()
    order: tuple[OrderKey, ...] = field(default=())


#: Operators Calcite's digest prints between parentheses, prefix; execution plans print infix.
BINARY = {"+", "-", "*", "/", "=", "<>", "<", ">", "<=", ">=", "AND", "OR"}


def shift(rex: Rex, mapping: Callable[[int], Rex]) -> Rex:
    """``rex`` with every input reference ``$i`` replaced by ``mapping(i)``."""
    if isinstance(rex, InputRef):
        return mapping(rex.index)
    if isinstance(rex, Call):
        return replace(rex, operands=tuple(shift(o, mapping) for o in rex.operands))
    if isinstance(rex, Over):
        return replace(
            rex,
            operands=tuple(shift(o, mapping) for o in rex.operands),
            partition=tuple(shift(p, mapping) for p in rex.partition),
            order=tuple(replace(k, expression=shift(k.expression, mapping)) for k in rex.order),
        )
    return rex


def inputs_used(rex: Rex, into: set[int] | None = None) -> set[int]:
    """The input fields ``rex`` reads."""
    used = set() if into is None else into
    if isinstance(rex, InputRef):
        used.add(rex.index)
    elif isinstance(rex, Call | Over):
        for operand in rex.operands:
            inputs_used(operand, used)
        if isinstance(rex, Over):
            for p in rex.partition:
                inputs_used(p, used)
            for k in rex.order:
                inputs_used(k.expression, used)
    return used


def conjunctions(rex: Rex) -> list[Rex]:
    """``AND``'s operands, flattened (Calcite keeps ANDs flat)."""
    if isinstance(rex, Call) and rex.operator == "AND":
        return [c for operand in rex.operands for c in conjunctions(operand)]
    return [rex]
