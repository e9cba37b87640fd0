"""Conjuncts of a join's condition that read one side only filter that side below the join
(Calcite's JoinConditionPushRule): both sides of an inner join, the side an outer join may pad
with nulls."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql.logical import LogicalJoin, RelNode
from flowmagic.sql.rex import InputRef, Rex, conjunctions, inputs_used, shift
from flowmagic.sql.rules import bottom_up
from flowmagic.sql.rules.filter_into_join import conjunction, filter_on

_PUSHABLE = {"inner": (True, True), "left": (False, True), "right": (True, False), "full": (False, False)}


def _push(node: RelNode) -> RelNode:
    if not isinstance(node, LogicalJoin) or node.condition is None:
        return node
    left, right = node.inputs
    width = len(left.fields)
    to_left_ok, to_right_ok = _PUSHABLE[node.join_type]
    to_left: list[Rex] = []
    to_right: list[Rex] = []
    kept: list[Rex] = []
    for part in conjunctions(node.condition):
        used = inputs_used(part)
        if used and max(used) < width and to_left_ok:
            to_left.append(part)
        elif used and min(used) >= width and to_right_ok:
            to_right.append(shift(part, lambda i: InputRef(right.fields[i - width].type, i - width)))
        else:
            kept.append(part)
    if not to_left and not to_right:
        return node
    return replace(node, inputs=[filter_on(left, to_left), filter_on(right, to_right)], condition=conjunction(kept))


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _push)
