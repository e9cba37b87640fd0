"""Constant expressions are folded (ReduceExpressionsRule). A cast of a character literal folds to
a literal of the cast's type, kept inside a CAST when only the nullability differs, as Calcite keeps
the reduced expression's type."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql import digest
from flowmagic.sql.logical import LogicalCalc, RelNode
from flowmagic.sql.rex import Call, Literal, Rex
from flowmagic.sql.rules import bottom_up
from flowmagic.sql.types import BOOLEAN, SqlType

_COMPARISONS = {"=", "<>", "<", ">", "<=", ">="}


def _coerce_literal(operand: Rex, other: Rex) -> Rex:
    """A CHAR literal compared with a VARCHAR takes the VARCHAR's type (Calcite's coercion)."""
    if isinstance(operand, Literal) and operand.type.name == "CHAR" and other.type.name == "VARCHAR":
        return Literal(other.type.with_nullable(False).without_time_attribute(), operand.value)
    return operand


_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "=": "<>", "<>": "="}
_SARG = SqlType("SARG", nullable=False)


def _sarg_points(parts: tuple[Rex, ...]) -> Rex | None:
    """OR of equalities of one expression with literals: ``SEARCH(x, Sarg[1, 2, 3])``."""
    subject = None
    values = []
    for part in parts:
        if not (isinstance(part, Call) and part.operator == "=" and isinstance(part.operands[1], Literal)):
            return None
        if subject is not None and part.operands[0] != subject:
            return None
        subject = part.operands[0]
        values.append(part.operands[1])
    if subject is None or len(values) < 2:
        return None
    ordered = sorted(values, key=lambda v: (str(type(v.value)), v.value))
    text = "Sarg[" + ", ".join(digest.literal(v.value, v.type, suffix=False) for v in ordered) + "]"
    return Call(BOOLEAN.with_nullable(subject.type.nullable), "SEARCH", (subject, Literal(_SARG, text)))


def _sarg_range(parts: tuple[Rex, ...]) -> Rex | None:
    """AND of a lower and an upper literal bound of one expression: ``SEARCH(x, Sarg[[1..5]])``."""
    if len(parts) != 2:
        return None
    bounds: dict[str, tuple[str, Literal]] = {}
    subject = None
    for part in parts:
        if not (isinstance(part, Call) and part.operator in (">=", ">", "<=", "<")):
            return None
        if not isinstance(part.operands[1], Literal) or isinstance(part.operands[0], Literal):
            return None
        if subject is not None and part.operands[0] != subject:
            return None
        subject = part.operands[0]
        side = "low" if part.operator in (">=", ">") else "high"
        bounds[side] = (part.operator, part.operands[1])
    if subject is None or set(bounds) != {"low", "high"}:
        return None
    (low_op, low), (high_op, high) = bounds["low"], bounds["high"]
    text = (
        ("[" if low_op == ">=" else "(")
        + digest.literal(low.value, low.type, suffix=False)
        + ".."
        + digest.literal(high.value, high.type, suffix=False)
        + ("]" if high_op == "<=" else ")")
    )
    return Call(BOOLEAN.with_nullable(subject.type.nullable), "SEARCH", (subject, Literal(_SARG, f"Sarg[{text}]")))


def _simplify_or(rex: Call, operands: tuple[Rex, ...]) -> Rex:
    """RexSimplify of an OR: NOT of a comparison becomes the opposite comparison, and a changed
    disjunction lists its IS NULL terms first."""
    simplified = []
    for operand in operands:
        if isinstance(operand, Call) and operand.operator == "NOT":
            inner = operand.operands[0]
            if isinstance(inner, Call) and inner.operator in _NEGATED:
                operand = Call(inner.type, _NEGATED[inner.operator], inner.operands)
        simplified.append(operand)
    if simplified != list(operands):
        simplified.sort(key=lambda o: not (isinstance(o, Call) and o.operator == "IS NULL"))
    return replace(rex, operands=tuple(simplified))


def reduce(rex: Rex) -> Rex:
    if isinstance(rex, Call):
        operands = tuple(reduce(o) for o in rex.operands)
        if rex.operator == "OR":
            sarg = _sarg_points(operands)
            return sarg if sarg is not None else _simplify_or(rex, operands)
        if rex.operator == "AND":
            sarg = _sarg_range(operands)
            if sarg is not None:
                return sarg
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
