"""Constant expressions are folded (ReduceExpressionsRule). A cast of a character literal folds to
a literal of the cast's type, kept inside a CAST when only the nullability differs, as Calcite keeps
the reduced expression's type."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

from flowmagic.sql import digest
from flowmagic.sql.logical import LogicalCalc, RelNode
from flowmagic.sql.rex import Call, Literal, Rex
from flowmagic.sql.rules import bottom_up
from flowmagic.sql.types import BOOLEAN, SqlType, least_restrictive

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
    return _search(
        subject, "Sarg[" + ", ".join(digest.literal(v.value, v.type, suffix=False) for v in ordered) + "]", ordered
    )


def _search(subject: Rex, text: str, values: list[Literal]) -> Rex:
    """``SEARCH(x, Sarg[...])``; a Sarg of character values names their type (in the physical
    plan's digest only)."""
    suffix = ""
    if values[0].type.is_character:
        # The values keep their literals' CHAR types, not the compared column's.
        typed = least_restrictive([SqlType("CHAR", max(len(str(v.value)), 1)) for v in values])
        suffix = f":{typed.full(not_null=False)}"
    return Call(BOOLEAN.with_nullable(subject.type.nullable), "SEARCH", (subject, Literal(_SARG, (text, suffix))))


def _complement(search: Rex) -> Rex | None:
    """NOT of a search of points: the ranges between them (``Sarg[(-∞..1), (1..2), (2..+∞)]``)."""
    if not (isinstance(search, Call) and search.operator == "SEARCH"):
        return None
    text, suffix = search.operands[1].value  # type: ignore[attr-defined]
    points = text[len("Sarg[") : -1].split(", ")
    if any(".." in p for p in points):
        return None
    bounds = ["-∞", *points, "+∞"]
    ranges = ", ".join(f"({a}..{b})" for a, b in pairwise(bounds))
    return Call(search.type, "SEARCH", (search.operands[0], Literal(_SARG, (f"Sarg[{ranges}]", suffix))))


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
    return _search(subject, f"Sarg[{text}]", [low, high])


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
        if rex.operator == "NOT":
            complement = _complement(operands[0])
            if complement is not None:
                return complement
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
