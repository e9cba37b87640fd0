"""LogicalProject and LogicalFilter become Calcs (Flink's FlinkLogicalCalc)."""

from __future__ import annotations

from flowmagic.sql.logical import LogicalCalc, LogicalFilter, LogicalProject, RelNode
from flowmagic.sql.rex import InputRef
from flowmagic.sql.rules import bottom_up


def _convert(node: RelNode) -> RelNode:
    if isinstance(node, LogicalProject):
        return LogicalCalc(node.inputs, node.fields, list(node.exprs), None)
    if isinstance(node, LogicalFilter):
        refs = [InputRef(f.type, i) for i, f in enumerate(node.fields)]
        return LogicalCalc(node.inputs, node.fields, refs, node.condition)  # type: ignore[arg-type]
    return node


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _convert)
