"""A filter on an aggregate's group keys moves below the aggregate (FilterAggregateTransposeRule):
conjuncts reading only group keys filter the aggregate's input instead."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql.logical import LogicalAggregate, LogicalCalc, RelNode
from flowmagic.sql.rex import InputRef, Rex, conjunctions, inputs_used, shift
from flowmagic.sql.rules import bottom_up
from flowmagic.sql.rules.filter_into_join import conjunction


def _transpose(node: RelNode) -> RelNode:
    if not (
        isinstance(node, LogicalCalc)
        and node.condition is not None
        and isinstance(node.inputs[0], LogicalAggregate)
        and node.inputs[0].group
    ):
        return node
    aggregate = node.inputs[0]
    keys = len(aggregate.group)
    source = aggregate.inputs[0]
    below: list[Rex] = []
    above: list[Rex] = []
    for part in conjunctions(node.condition):
        used = inputs_used(part)
        if used and max(used) < keys:
            below.append(shift(part, lambda i: InputRef(source.fields[aggregate.group[i]].type, aggregate.group[i])))
        else:
            above.append(part)
    if not below:
        return node
    refs: list[Rex] = [InputRef(f.type, i) for i, f in enumerate(source.fields)]
    filtered = LogicalCalc([source], source.fields, refs, conjunction(below))
    return replace(node, inputs=[replace(aggregate, inputs=[filtered])], condition=conjunction(above))


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _transpose)
