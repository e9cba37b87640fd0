"""A filter over a join moves into it (FlinkFilterJoinRule): conjuncts over one side go below the
join, onto that side; conjuncts over both sides join its condition."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql.logical import LogicalCalc, LogicalJoin, RelNode
from flowmagic.sql.rex import Call, InputRef, Rex, conjunctions, inputs_used, shift
from flowmagic.sql.rules import bottom_up
from flowmagic.sql.types import BOOLEAN


def conjunction(parts: list[Rex]) -> Rex | None:
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return Call(BOOLEAN.with_nullable(any(p.type.nullable for p in parts)), "AND", tuple(parts))


def filter_on(side: RelNode, parts: list[Rex]) -> RelNode:
    if not parts:
        return side
    refs: list[Rex] = [InputRef(f.type, i) for i, f in enumerate(side.fields)]
    return LogicalCalc([side], side.fields, refs, conjunction(parts))


def _push(node: RelNode) -> RelNode:
    if not (isinstance(node, LogicalCalc) and node.condition is not None and isinstance(node.inputs[0], LogicalJoin)):
        return node
    join = node.inputs[0]
    if join.join_type != "inner":
        return node
    left, right = join.inputs
    width = len(left.fields)
    to_left, to_right, to_join = [], [], []
    for part in conjunctions(node.condition):
        used = inputs_used(part)
        if used and max(used) < width:
            to_left.append(part)
        elif used and min(used) >= width:
            to_right.append(shift(part, lambda i: InputRef(right.fields[i - width].type, i - width)))
        else:
            to_join.append(part)
    existing = conjunctions(join.condition) if join.condition is not None else []
    new_join = replace(
        join,
        inputs=[filter_on(left, to_left), filter_on(right, to_right)],
        condition=conjunction(existing + to_join),
    )
    return LogicalCalc([new_join], node.fields, node.projects, None)


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _push)
