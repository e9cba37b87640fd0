"""A filter over a window table function's input columns moves below it, onto its input (Flink's
streaming planner filters rows before assigning them to windows; its batch planner does not)."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql.logical import LogicalCalc, LogicalTableFunctionScan, RelNode
from flowmagic.sql.rex import InputRef, Rex, conjunctions, inputs_used
from flowmagic.sql.rules import bottom_up
from flowmagic.sql.rules.filter_into_join import conjunction


def _transpose(node: RelNode) -> RelNode:
    if not (
        isinstance(node, LogicalCalc)
        and node.condition is not None
        and isinstance(node.inputs[0], LogicalTableFunctionScan)
    ):
        return node
    scan = node.inputs[0]
    source = scan.inputs[0]
    width = len(source.fields)
    below: list[Rex] = []
    above: list[Rex] = []
    for part in conjunctions(node.condition):
        used = inputs_used(part)
        (below if used and max(used) < width else above).append(part)
    if not below:
        return node
    refs: list[Rex] = [InputRef(f.type, i) for i, f in enumerate(source.fields)]
    filtered = LogicalCalc([source], source.fields, refs, conjunction(below))
    return replace(node, inputs=[replace(scan, inputs=[filtered])], condition=conjunction(above))


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _transpose)
