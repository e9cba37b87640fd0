"""Fields nobody reads are dropped on the way down (Calcite's field trimming with Flink's
projection push-down): Calcs keep only what their consumers read, watermark assigners and window
table functions keep their time column, and a table source reads only the columns in use
(``fields=[...]``). Values and unions keep their fields."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql.logical import (
    Field,
    LogicalAggregate,
    LogicalCalc,
    LogicalJoin,
    LogicalRank,
    LogicalTableFunctionScan,
    LogicalTableScan,
    LogicalWatermarkAssigner,
    RelNode,
)
from flowmagic.sql.rex import InputRef, Literal, Rex, inputs_used, shift
from flowmagic.sql.types import INTEGER, SqlType

Mapping = dict[int, int]


def _remap(rex: Rex, mapping: Mapping) -> Rex:
    return shift(rex, lambda i: InputRef(_type_of(rex, i), mapping[i]))


def _type_of(rex: Rex, index: int) -> SqlType:
    found = _find_ref(rex, index)
    assert found is not None
    return found.type


def _find_ref(rex: Rex, index: int) -> InputRef | None:
    if isinstance(rex, InputRef):
        return rex if rex.index == index else None
    for operand in getattr(rex, "operands", ()):
        found = _find_ref(operand, index)
        if found is not None:
            return found
    for extra in list(getattr(rex, "partition", ())) + [k.expression for k in getattr(rex, "order", ())]:
        found = _find_ref(extra, index)
        if found is not None:
            return found
    return None


def _constant(node: RelNode) -> RelNode:
    """What an aggregate reading no field (COUNT(*)) reads: Calcite projects the constant 0."""
    zero = Literal(INTEGER.with_nullable(False), 0)
    return LogicalCalc([node], [Field("$f0", zero.type)], [zero], None)


def _trimmed(node: RelNode, needed: set[int]) -> tuple[RelNode, Mapping]:
    """``node`` pruned to ``needed``, with a Calc dropping what it could not (Calcite's field
    trimming of a join's inputs)."""
    child, mapping = prune(node, needed)
    keep = sorted(needed)
    if len(child.fields) <= len(keep) or not keep:
        return child, mapping
    projects: list[Rex] = [InputRef(child.fields[mapping[i]].type, mapping[i]) for i in keep]
    calc = LogicalCalc([child], [child.fields[mapping[i]] for i in keep], projects, None)
    return calc, {old: new for new, old in enumerate(keep)}


def _identity(node: RelNode) -> tuple[RelNode, Mapping]:
    return node, {i: i for i in range(len(node.fields))}


def prune(node: RelNode, needed: set[int]) -> tuple[RelNode, Mapping]:
    """``node`` reduced to the ``needed`` output fields (at least), and where each now is."""
    if isinstance(node, LogicalCalc) and not needed and node.condition is None:
        return _constant(prune(node.inputs[0], set())[0]), {}
    if isinstance(node, LogicalCalc):
        keep = sorted(needed) if needed else [0]
        used: set[int] = set()
        for i in keep:
            inputs_used(node.projects[i], used)
        if node.condition is not None:
            inputs_used(node.condition, used)
        child, mapping = prune(node.inputs[0], used)
        projects = [_remap(node.projects[i], mapping) for i in keep]
        condition = _remap(node.condition, mapping) if node.condition is not None else None
        fields = [node.fields[i] for i in keep]
        return LogicalCalc([child], fields, projects, condition), {old: new for new, old in enumerate(keep)}
    if isinstance(node, LogicalTableScan):
        if not node.projection_push_down:
            return _identity(node)
        keep = sorted(needed) if needed else [0]
        return replace(node, fields=[node.fields[i] for i in keep]), {old: new for new, old in enumerate(keep)}
    if isinstance(node, LogicalWatermarkAssigner):
        assert node.watermark is not None
        used = set(needed) | {node.rowtime} | inputs_used(node.watermark)
        child, mapping = prune(node.inputs[0], used)
        positions = {old: mapping[old] for old in used}
        fields = list(child.fields)
        fields[mapping[node.rowtime]] = node.fields[node.rowtime]
        watermark = _remap(node.watermark, mapping)
        return (
            LogicalWatermarkAssigner([child], fields, rowtime=mapping[node.rowtime], watermark=watermark),
            positions,
        )
    if isinstance(node, LogicalTableFunctionScan):
        assert node.window is not None
        width = len(node.inputs[0].fields)
        used = {i for i in needed if i < width} | {node.window.time_column} | set(node.window.partition)
        child, mapping = prune(node.inputs[0], used)
        window = replace(
            node.window,
            time_column=mapping[node.window.time_column],
            partition=tuple(mapping[p] for p in node.window.partition),
        )
        fields = list(child.fields) + node.fields[width:]
        positions = {old: mapping[old] for old in used}
        positions.update({width + k: len(child.fields) + k for k in range(len(node.fields) - width)})
        return LogicalTableFunctionScan([child], fields, window=window), positions
    if isinstance(node, LogicalAggregate):
        used = set(node.group) | {a for c in node.calls for a in c.args}
        used |= {c.filter for c in node.calls if c.filter is not None}
        child, mapping = prune(node.inputs[0], used)
        if not used and not isinstance(child, LogicalCalc):
            child = _constant(child)
        calls = [
            replace(c, args=tuple(mapping[a] for a in c.args), filter=None if c.filter is None else mapping[c.filter])
            for c in node.calls
        ]
        aggregate = LogicalAggregate([child], node.fields, group=[mapping[g] for g in node.group], calls=calls)
        if [mapping[g] for g in node.group] != list(range(len(node.group))):
            raise AssertionError("group keys must lead the aggregate's input")
        return _identity(aggregate)
    if isinstance(node, LogicalJoin):
        width = len(node.inputs[0].fields)
        used = set(needed) | (inputs_used(node.condition) if node.condition is not None else set())
        left, left_map = _trimmed(node.inputs[0], {i for i in used if i < width})
        right, right_map = _trimmed(node.inputs[1], {i - width for i in used if i >= width})
        mapping = {old: new for old, new in left_map.items()}
        mapping.update({width + old: len(left.fields) + new for old, new in right_map.items()})
        fields = list(left.fields) + list(right.fields)
        names = {}
        for old, new in mapping.items():
            names[new] = node.fields[old]
        fields = [names.get(i, f) for i, f in enumerate(fields)]
        condition = _remap(node.condition, mapping) if node.condition is not None else None
        return LogicalJoin([left, right], fields, condition=condition, join_type=node.join_type), mapping
    if isinstance(node, LogicalRank):
        width = len(node.inputs[0].fields)
        used = {i for i in needed if i < width} | set(node.partition) | {k for k, _, _ in node.order}
        child, mapping = prune(node.inputs[0], used)
        positions = {old: mapping[old] for old in used}
        fields = list(child.fields)
        if node.output_rank:
            positions[width] = len(child.fields)
            fields.append(node.fields[width])
        rank = replace(
            node,
            inputs=[child],
            fields=fields,
            partition=tuple(mapping[p] for p in node.partition),
            order=[(mapping[k], d, n) for k, d, n in node.order],
        )
        return rank, positions
    return _identity(replace(node, inputs=[prune(i, set(range(len(i.fields))))[0] for i in node.inputs]))


def apply(rel: RelNode) -> RelNode:
    return prune(rel, set(range(len(rel.fields))))[0]
