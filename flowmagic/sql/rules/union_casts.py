"""The inputs of a UNION are cast to the union's column types where theirs differ, nullability
included (Flink's type coercion of set operations, done while optimizing)."""

from __future__ import annotations

from flowmagic.sql.logical import Field, LogicalCalc, LogicalUnion, RelNode
from flowmagic.sql.rex import Call, InputRef, Rex
from flowmagic.sql.rules import bottom_up


def _cast(node: RelNode) -> RelNode:
    if not isinstance(node, LogicalUnion):
        return node
    inputs = []
    for branch in node.inputs:
        projects: list[Rex] = []
        for i, (mine, wanted) in enumerate(zip(branch.fields, node.fields, strict=True)):
            ref = InputRef(mine.type, i)
            projects.append(ref if mine.type == wanted.type else Call(wanted.type, "CAST", (ref,)))
        if all(isinstance(p, InputRef) for p in projects):
            inputs.append(branch)
        else:
            fields = [Field(f.name, p.type) for f, p in zip(branch.fields, projects, strict=True)]
            inputs.append(LogicalCalc([branch], fields, projects, None))
    return LogicalUnion(inputs, node.fields, all=node.all)


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _cast)
