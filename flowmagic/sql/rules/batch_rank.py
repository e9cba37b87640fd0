"""RANK() or DENSE_RANK() filtered to a range becomes a Rank in the batch planner (its Rank takes
no ROW_NUMBER, which stays an OverAggregate)."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql.logical import LogicalCalc, LogicalRank, LogicalWindow, RelNode
from flowmagic.sql.rex import conjunctions
from flowmagic.sql.rules import bottom_up
from flowmagic.sql.rules.filter_into_join import conjunction
from flowmagic.sql.rules.rank import rank_range


def _rank(node: RelNode) -> RelNode:
    if not (isinstance(node, LogicalCalc) and node.condition is not None and isinstance(node.inputs[0], LogicalWindow)):
        return node
    window = node.inputs[0]
    if window.calls not in (["RANK"], ["DENSE_RANK"]):
        return node
    found = rank_range(conjunctions(node.condition), len(window.inputs[0].fields))
    if found is None:
        return node
    start, end, rest = found
    rank = LogicalRank(
        window.inputs,
        list(window.fields),
        partition=window.partition,
        order=window.order,
        rank_start=start,
        rank_end=end,
        output_rank=True,
        function=window.calls[0],
    )
    return replace(node, inputs=[rank], condition=conjunction(rest))


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _rank)
