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


_STRONG = {"=", "<>", "<", ">", "<=", ">=", "LIKE", "IS NOT NULL", "SEARCH"}


def _to_inner(node: LogicalCalc, join: LogicalJoin) -> tuple[LogicalCalc, LogicalJoin]:
    """An outer join under a filter that rejects the null-padded rows is an inner join
    (Calcite's FilterJoinRule): its fields lose the nullability the outer join gave them, and
    the Calc casts them back to the types its own output had."""
    width = len(join.inputs[0].fields)
    padded = {"left": (width, len(join.fields)), "right": (0, width)}.get(join.join_type)
    assert node.condition is not None
    if padded is None or not any(
        isinstance(part, Call)
        and part.operator in _STRONG
        and (used := inputs_used(part))
        and all(padded[0] <= i < padded[1] for i in used)
        for part in conjunctions(node.condition)
    ):
        return node, join
    children = join.inputs[0].fields + join.inputs[1].fields
    fields = [replace(f, type=c.type) for f, c in zip(join.fields, children, strict=True)]
    inner = replace(join, fields=fields, join_type="inner")

    def retyped(index: int) -> Rex:
        return InputRef(fields[index].type, index)

    projects: list[Rex] = []
    for project, output in zip(node.projects, node.fields, strict=True):
        project = shift(project, retyped)
        if project.type != output.type:
            project = Call(output.type, "CAST", (project,))
        projects.append(project)
    return replace(node, inputs=[inner], projects=projects, condition=shift(node.condition, retyped)), inner


def _push(node: RelNode) -> RelNode:
    if not (isinstance(node, LogicalCalc) and node.condition is not None and isinstance(node.inputs[0], LogicalJoin)):
        return node
    node, join = _to_inner(node, node.inputs[0])
    if join.join_type != "inner" or node.condition is None:
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
