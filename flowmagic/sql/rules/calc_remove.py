"""A Calc that projects its input unchanged is removed (CalcRemoveRule); names do not count."""

from __future__ import annotations

from flowmagic.sql.logical import LogicalCalc, RelNode
from flowmagic.sql.rules import bottom_up


def _remove(node: RelNode) -> RelNode:
    if isinstance(node, LogicalCalc) and node.is_identity:
        return node.inputs[0]
    return node


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _remove)
