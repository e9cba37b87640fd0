"""Changelog mode inference (Flink's FlinkChangelogModeInferenceProgram): what kinds of rows
each node emits, bottom-up, and where UPDATE_BEFORE is needed, top-down: by retracting consumers
(group aggregates and joins over updates, Rank and SortLimit in RetractStrategy, filters), by a
sink that takes all kinds (a query's collected result takes upserts)."""

from __future__ import annotations

from flowmagic.sql import physical as ph

_PASS_THROUGH = (ph.Calc, ph.Exchange, ph.WatermarkAssigner, ph.Union)
_SINKS_WITHOUT_UPDATE_BEFORE = {"blackhole"}


def _keys_through_calc(node: ph.Calc) -> list[frozenset[int]]:
    positions: dict[int, int] = {}
    for i, p in enumerate(node.projects):
        if isinstance(p, ph.InputRef):
            positions.setdefault(p.index, i)
    keys = []
    for key in node.inputs[0].unique_keys:
        if all(k in positions for k in key):
            keys.append(frozenset(positions[k] for k in key))
    return keys


def infer(node: ph.PhysicalNode) -> None:
    for child in node.inputs:
        infer(child)
    inputs = [c.changelog for c in node.inputs]
    insert_only = all(modes == ("I",) for modes in inputs)
    if isinstance(node, ph.TableSourceScan) and node.all_kinds:
        node.changelog = ("I", "UB", "UA", "D")
    elif isinstance(node, ph.TableSourceScan | ph.Values):
        node.changelog = ("I",)
    elif isinstance(node, ph.Union):
        node.changelog = tuple(m for m in ("I", "UA", "D") if any(m in modes for modes in inputs))
    elif isinstance(node, _PASS_THROUGH):
        node.changelog = inputs[0]
        node.unique_keys = _keys_through_calc(node) if isinstance(node, ph.Calc) else list(node.inputs[0].unique_keys)
    elif isinstance(node, ph.GroupAggregate):
        node.changelog = ("I", "UA") if insert_only else ("I", "UA", "D")
        node.unique_keys = [frozenset(range(len(node.grouping)))]
    elif isinstance(node, ph.LocalWindowAggregate | ph.GlobalWindowAggregate | ph.WindowAggregate | ph.IntervalJoin):
        node.changelog = ("I",)
    elif isinstance(node, ph.Join):
        outer = node.join_type != "inner"
        node.changelog = ("I",) if insert_only and not outer else ("I", "UA", "D")
    elif isinstance(node, ph.Rank):
        node.changelog = ("I",) if node.keeps_first_row and insert_only else ("I", "UA", "D")
        node.strategy = "AppendFastStrategy" if insert_only else "RetractStrategy"
        width = len(node.inputs[0].fields)
        if node.output_rank:
            node.unique_keys = [frozenset(node.partition) | {width}]
        elif node.rank_end == 1:
            node.unique_keys = [frozenset(node.partition)]
    elif isinstance(node, ph.SortLimit):
        node.changelog = ("I", "UA", "D")
        node.strategy = "AppendFastStrategy" if insert_only else "RetractStrategy"
    elif isinstance(node, ph.Sink):
        node.changelog = ()


def require_update_before(node: ph.PhysicalNode, required: bool, drop: bool = True) -> None:
    """Mark where UPDATE_BEFORE is needed below ``node``; ``drop``: put Flink's DropUpdateBefore
    over a changelog source whose consumer does not need it (EXPLAIN's query; a collect sink at
    execution takes every kind, so nothing is dropped)."""
    if required and "UA" in node.changelog and "UB" not in node.changelog:
        node.changelog = tuple(m for m in ("I", "UB", "UA", "D") if m in node.changelog or m == "UB")
    for index, child in enumerate(node.inputs):
        if isinstance(node, ph.Calc) and node.condition is not None:
            # A filter over updates must see the old row to drop what stops matching.
            needed = True
        elif isinstance(node, _PASS_THROUGH):
            needed = required
        elif isinstance(node, ph.Rank | ph.SortLimit):
            needed = node.strategy == "RetractStrategy"
        elif isinstance(node, ph.Sink):
            needed = node.connector not in _SINKS_WITHOUT_UPDATE_BEFORE
        else:
            needed = True
        require_update_before(child, needed, drop)
        if drop and _needs_drop(child, needed):
            node.inputs[index] = _drop_update_before(child)
    if isinstance(node, _PASS_THROUGH):
        kinds = {m for child in node.inputs for m in child.changelog}
        node.changelog = tuple(m for m in ("I", "UB", "UA", "D") if m in kinds)


def _drop_update_before(node: ph.PhysicalNode) -> ph.PhysicalNode:
    """Flink's DropUpdateBefore over a changelog source whose consumer needs no UPDATE_BEFORE."""
    return ph.DropUpdateBefore([node], list(node.fields), changelog=tuple(m for m in node.changelog if m != "UB"))


def _needs_drop(node: ph.PhysicalNode, required: bool) -> bool:
    return not required and isinstance(node, ph.TableSourceScan) and "UB" in node.changelog


def apply(root: ph.PhysicalNode, collected: bool = False) -> ph.PhysicalNode:
    """``collected``: the query's rows go to a sink that takes every kind (Flink's collect
    sink at execution); EXPLAIN's query takes upserts."""
    infer(root)
    require_update_before(root, False, drop=not collected)
    return _drop_update_before(root) if not collected and _needs_drop(root, False) else root
