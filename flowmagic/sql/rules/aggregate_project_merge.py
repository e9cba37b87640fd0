"""An aggregate reads through a Calc that only reorders its input's fields
(FlinkAggregateProjectMergeRule): the group keys and call arguments are remapped to the Calc's
input and the Calc goes.

Calcite's rule merges any projection of plain field references; Flink's cost-based logical phase
then keeps the merged plan where it is cheaper. A Calc that keeps every field of its input, only
reordered, saves no bytes on the exchange after it, so the merged plan is always the cheaper one;
a Calc that drops fields stays (the narrower rows cost less to ship), as Flink's plans show."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql.logical import Field, LogicalAggregate, LogicalCalc, RelNode
from flowmagic.sql.rex import InputRef, Rex
from flowmagic.sql.rules import bottom_up


def _permutation(calc: LogicalCalc) -> list[int] | None:
    """The input field each output field of ``calc`` is, when it only reorders all of them."""
    if calc.condition is None and all(isinstance(p, InputRef) for p in calc.projects):
        sources = [p.index for p in calc.projects if isinstance(p, InputRef)]
        if sorted(sources) == list(range(len(calc.inputs[0].fields))):
            return sources
    return None


def _merge(node: RelNode) -> RelNode:
    if not isinstance(node, LogicalAggregate) or not isinstance(node.inputs[0], LogicalCalc):
        return node
    calc = node.inputs[0]
    mapping = _permutation(calc)
    if mapping is None or calc.is_identity:
        return node
    source = calc.inputs[0]
    keys = [mapping[g] for g in node.group]
    group = sorted(keys)
    calls = [
        replace(c, args=tuple(mapping[a] for a in c.args), filter=None if c.filter is None else mapping[c.filter])
        for c in node.calls
    ]
    # Group keys take their names from the new input, as Calcite derives an aggregate's row type.
    fields = [source.fields[g] for g in group] + list(node.fields[len(group) :])
    aggregate = LogicalAggregate([source], fields, group=group, calls=calls)
    if keys == group:
        return aggregate
    # Calcite's group set is ordered: a Calc puts the keys back in the query's order.
    positions = [group.index(k) for k in keys] + list(range(len(group), len(fields)))
    projects: list[Rex] = [InputRef(fields[p].type, p) for p in positions]
    return LogicalCalc([aggregate], [Field(fields[p].name, fields[p].type) for p in positions], projects, None)


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _merge)
