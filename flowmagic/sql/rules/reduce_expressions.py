"""Constant expressions are folded (ReduceExpressionsRule). A cast of a character literal folds to
a literal of the cast's type, kept inside a CAST when only the nullability differs, as Calcite keeps
the reduced expression's type."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql.logical import LogicalCalc, RelNode
from flowmagic.sql.rex import Call, Literal, Rex
from flowmagic.sql.rules import bottom_up

_COMPARISONS = {"=", "<>", "<", ">", "<=", ">="}


def _coerce_literal(operand: Rex, other: Rex) -> Rex:
    """A CHAR literal compared with a VARCHAR takes the VARCHAR's type (Calcite's coercion)."""
    if isinstance(operand, Literal) and operand.type.name == "CHAR" and other.type.name == "VARCHAR":
        return Literal(other.type.with_nullable(False).without_time_attribute(), operand.value)
    return operand


def reduce(rex: Rex) -> Rex:
    if isinstance(rex, Call):
        operands = tuple(reduce(o) for o in rex.operands)
        if rex.operator in _COMPARISONS and len(operands) == 2:
            operands = (_coerce_literal(operands[0], operands[1]), _coerce_literal(operands[1], operands[0]))
        rex = replace(rex, operands=operands)
        operand = operands[0] if operands else None
        foldable = isinstance(operand, Literal) and operand.type.is_character and operand.value is not None
        if rex.operator == "CAST" and foldable and rex.type.is_character:
            assert isinstance(operand, Literal)
            folded = Literal(rex.type.with_nullable(False), operand.value)
            return folded if not rex.type.nullable else Call(rex.type, "CAST", (folded,))
    return rex


def _reduce(node: RelNode) -> RelNode:
    if isinstance(node, LogicalCalc):
        condition = reduce(node.condition) if node.condition is not None else None
        return replace(node, projects=[reduce(p) for p in node.projects], condition=condition)
    return node


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _reduce)
