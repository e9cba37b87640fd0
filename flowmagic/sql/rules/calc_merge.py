"""A Calc over a Calc becomes one Calc (CalcMergeRule); a Calc over a windowed Calc (an OVER
call) stays apart, since a filter cannot move below the window it filters on. A projection that
only repeats its input is dropped first (ProjectRemoveRule), so the input's field names stay."""

from __future__ import annotations

from flowmagic.sql.logical import LogicalCalc, RelNode
from flowmagic.sql.rex import Call, InputRef, Over, Rex, shift
from flowmagic.sql.rules import bottom_up
from flowmagic.sql.types import BOOLEAN


def has_over(calc: LogicalCalc) -> bool:
    return any(isinstance(p, Over) for p in calc.projects)


def merge(top: LogicalCalc, bottom: LogicalCalc) -> LogicalCalc:
    def through(index: int) -> Rex:
        return bottom.projects[index]

    projects = [shift(p, through) for p in top.projects]
    conditions = [c for c in (bottom.condition, top.condition and shift(top.condition, through)) if c is not None]
    condition: Rex | None = None
    if len(conditions) == 1:
        condition = conditions[0]
    elif conditions:
        operands: list[Rex] = []
        for c in conditions:
            operands.extend(c.operands if isinstance(c, Call) and c.operator == "AND" else [c])
        condition = Call(BOOLEAN.with_nullable(any(o.type.nullable for o in operands)), "AND", tuple(operands))
    # A pure filter has its input's row type (Calcite's Filter), names included.
    pure_filter = len(top.projects) == len(bottom.fields) and all(
        isinstance(p, InputRef) and p.index == i for i, p in enumerate(top.projects)
    )
    return LogicalCalc(bottom.inputs, bottom.fields if pure_filter else top.fields, projects, condition)


def _merge(node: RelNode) -> RelNode:
    if isinstance(node, LogicalCalc) and isinstance(node.inputs[0], LogicalCalc):
        bottom = node.inputs[0]
        if node.is_identity:
            return bottom
        if not has_over(bottom):
            return merge(node, bottom)
    return node


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _merge)
