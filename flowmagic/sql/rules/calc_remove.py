"""A Calc that projects its input unchanged is removed (CalcRemoveRule); names do not count. A
Calc that only filters has its input's row type, names included (Calcite's Filter)."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql.logical import LogicalCalc, RelNode
from flowmagic.sql.rex import InputRef
from flowmagic.sql.rules import bottom_up


def _remove(node: RelNode) -> RelNode:
    if not isinstance(node, LogicalCalc):
        return node
    if node.is_identity:
        return node.inputs[0]
    source = node.inputs[0]
    pure_filter = len(node.projects) == len(source.fields) and all(
        isinstance(p, InputRef) and p.index == i for i, p in enumerate(node.projects)
    )
    return replace(node, fields=list(source.fields)) if pure_filter else node


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _remove)
