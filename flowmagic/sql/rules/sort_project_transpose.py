"""A sort over a projection moves below it (Calcite's SortProjectTransposeRule), when the sort
keys are fields the projection passes through: the sort reads the input, the Calc runs on top."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql.logical import LogicalCalc, LogicalSort, RelNode
from flowmagic.sql.rex import InputRef
from flowmagic.sql.rules import bottom_up


def _transpose(node: RelNode) -> RelNode:
    if not (isinstance(node, LogicalSort) and isinstance(node.inputs[0], LogicalCalc)):
        return node
    calc = node.inputs[0]
    if calc.condition is not None:
        return node
    keys = []
    for key, descending, nulls_last in node.keys:
        project = calc.projects[key]
        if not isinstance(project, InputRef):
            return node
        keys.append((project.index, descending, nulls_last))
    source = calc.inputs[0]
    sort = replace(node, inputs=[source], fields=list(source.fields), keys=keys)
    return replace(calc, inputs=[sort])


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _transpose)
