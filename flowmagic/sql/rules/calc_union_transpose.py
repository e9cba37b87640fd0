"""A Calc over a UNION ALL moves into each of the union's inputs (ProjectSetOpTransposeRule,
FilterSetOpTransposeRule), where it merges with the input's own Calc, simplified as merged
programs are (``rex_simplify``). Flink does this after reducing expressions, so a VALUES of
expressions (a union of one-row projections) keeps its constant calls unfolded per row."""

from __future__ import annotations

from flowmagic.sql.logical import Field, LogicalCalc, LogicalUnion, RelNode
from flowmagic.sql.rex import InputRef, Rex, shift
from flowmagic.sql.rex_simplify import simplify_preserving_type
from flowmagic.sql.rules import bottom_up
from flowmagic.sql.rules.calc_merge import has_over, merge


def _into(top: LogicalCalc, branch: RelNode) -> RelNode:
    def own(index: int) -> Rex:
        return InputRef(branch.fields[index].type, index)

    projects = [shift(p, own) for p in top.projects]
    condition = shift(top.condition, own) if top.condition is not None else None
    calc = LogicalCalc(
        [branch], [Field(f.name, p.type) for f, p in zip(top.fields, projects, strict=True)], projects, condition
    )
    if not isinstance(branch, LogicalCalc) or has_over(branch):
        return calc
    merged = merge(calc, branch)
    merged.projects = [simplify_preserving_type(p) for p in merged.projects]
    if merged.condition is not None:
        merged.condition = simplify_preserving_type(merged.condition)
    return merged


def _transpose(node: RelNode) -> RelNode:
    if isinstance(node, LogicalCalc) and isinstance(node.inputs[0], LogicalUnion) and not has_over(node):
        union = node.inputs[0]
        return LogicalUnion([_into(node, b) for b in union.inputs], node.fields, all=union.all)
    return node


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _transpose)
