"""Changelog mode inference (Flink's FlinkChangelogModeInferenceProgram): what kinds of rows
each node emits, bottom-up, and where UPDATE_BEFORE is needed, top-down: by retracting consumers
(group aggregates and joins over updates, Rank and SortLimit in RetractStrategy, filters), by a
sink that takes all kinds (a query's collected result takes upserts)."""

from __future__ import annotations

from flowmagic.sql import physical as ph
from flowmagic.sql import tree
from flowmagic.sql.errors import TableException

_PASS_THROUGH = (ph.Calc, ph.Exchange, ph.WatermarkAssigner, ph.Union)
#: A modify kind (Flink's ModifyKind) and the row kinds that carry it.
_MODIFY_KINDS = {"insert": ("I",), "update": ("UB", "UA"), "delete": ("D",)}


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
        if node.join_type == "inner":
            # An inner join forwards the kinds of changes its inputs make.
            node.changelog = tuple(m for m in ("I", "UA", "D") if any(m in modes for modes in inputs))
        else:
            node.changelog = ("I", "UA", "D")
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


NONE, ONLY_AFTER, BEFORE_AFTER = "NONE", "ONLY_UPDATE_AFTER", "BEFORE_AND_AFTER"
#: What a node emits in its updates: the UpdateKindTrait each node of a subtree provides.
Provided = dict[int, str]


def _updates(node: ph.PhysicalNode) -> bool:
    return "UA" in node.changelog


def _before_after_or_none(node: ph.PhysicalNode) -> str:
    return BEFORE_AFTER if _updates(node) else NONE


def _only_after_or_none(node: ph.PhysicalNode) -> str:
    return ONLY_AFTER if _updates(node) else NONE


def _input_unique_key_holds_join_key(join: ph.Join, side: int) -> bool:
    """Whether a unique key of the join's input holds all its join keys: an update of that input
    then replaces the one row of its join key, so its old row (UPDATE_BEFORE) is not needed
    (``StreamPhysicalJoin.inputUniqueKeyContainsJoinKey``)."""
    keys = join.join_keys(side)
    return bool(keys) and any(set(keys) <= key for key in join.inputs[side].unique_keys)


def _provide(node: ph.PhysicalNode, children: Provided | None, provided: str) -> Provided | None:
    if children is None or (provided == NONE) == _updates(node):
        return None
    return {**children, id(node): provided}


def _children(node: ph.PhysicalNode, required: list[str]) -> Provided | None:
    found: Provided = {}
    for child, trait in zip(node.inputs, required, strict=True):
        below = _satisfy(child, trait)
        if below is None or below[id(child)] != trait:
            return None
        found.update(below)
    return found


def _sink_traits(sink: ph.Sink) -> list[str]:
    """What the sink asks of its input's updates: a sink taking UPDATE_AFTER without
    UPDATE_BEFORE prefers them without (``inferSinkRequiredTraits``)."""
    child = sink.inputs[0]
    if "UB" not in sink.accepts and "UA" in sink.accepts:
        return [_only_after_or_none(child), _before_after_or_none(child)]
    if "UB" in sink.accepts:
        return [_before_after_or_none(child)]
    return [NONE]


def describe(node: ph.PhysicalNode) -> str:
    """A node as Flink's planner names it in its errors (``getRelDetailedDescription``)."""
    return tree.call(node.name(False), node.physical_terms(True, False))


def refusal(table: str, changes: list[str], described: str) -> str:
    """Flink's words for a sink that cannot consume the ``changes`` (``update``, ``delete``)
    the node ``described`` makes."""
    return (
        f"Table sink '{table}' doesn't support consuming {' and '.join(changes)} changes "
        f"which is produced by node {described}"
    )


def _check_sink(sink: ph.Sink) -> None:
    """Refuse a query whose changes the sink cannot consume (the sink's part of Flink's
    ``SatisfyModifyKindSetTraitVisitor``): its requirement passes through the nodes that
    forward their input's changes, down to the first node that makes changes the sink does
    not take."""

    def require(node: ph.PhysicalNode) -> None:
        if isinstance(node, _PASS_THROUGH):
            for child in node.inputs:
                require(child)
            return
        made = [kind for kind, rows in _MODIFY_KINDS.items() if any(r in node.changelog for r in rows)]
        taken = {kind for kind, rows in _MODIFY_KINDS.items() if any(r in sink.accepts for r in rows)}
        changes = [kind for kind in made if kind not in taken]
        if changes:
            raise TableException(refusal(sink.table, changes, describe(node)))

    require(sink.inputs[0])


def _satisfy(node: ph.PhysicalNode, required: str) -> Provided | None:
    """The update kinds a subtree provides so that ``node`` emits ``required`` (Flink's
    ``SatisfyUpdateKindTraitVisitor``); None when it cannot."""
    if isinstance(node, ph.Sink):
        for trait in _sink_traits(node):
            children = _children(node, [trait])
            if children is not None:
                return {**children, id(node): NONE}
        return None
    if isinstance(node, ph.GroupAggregate):
        # An aggregate retracts what an updated input row contributed: it needs the old row.
        return _provide(node, _children(node, [_before_after_or_none(node.inputs[0])]), required)
    if isinstance(node, ph.Rank | ph.SortLimit):
        trait = _before_after_or_none(node.inputs[0]) if node.strategy == "RetractStrategy" else NONE
        return _provide(node, _children(node, [trait]), required)
    if isinstance(node, ph.Join):
        after_only = required == ONLY_AFTER
        traits = []
        for side, child in enumerate(node.inputs):
            if after_only and _updates(child) and not _input_unique_key_holds_join_key(node, side):
                return None
            traits.append(_only_after_or_none(child) if after_only else _before_after_or_none(child))
        return _provide(node, _children(node, traits), required)
    if isinstance(node, ph.Calc) and node.condition is not None and required == ONLY_AFTER:
        # A filter over updates must see the old row to drop what stops matching (FLINK-9528).
        return None
    if isinstance(node, ph.Union):
        children = _children(node, [required if _updates(child) else NONE for child in node.inputs])
        return _provide(node, children, required if _updates(node) else NONE)
    if isinstance(node, _PASS_THROUGH):
        children = _children(node, [required])
        return _provide(node, children, required)
    if isinstance(node, ph.DropUpdateBefore):
        return _provide(node, _children(node, [BEFORE_AFTER]), required)
    if isinstance(node, ph.TableSourceScan) and node.all_kinds:
        # A changelog source emits both; a DropUpdateBefore above it serves "only after".
        return {id(node): required} if required != NONE else None
    if node.inputs:
        # Window aggregates, interval joins and the like take inserts only.
        return _provide(node, _children(node, [NONE] * len(node.inputs)), required)
    return _provide(node, {}, NONE)


def _apply(node: ph.PhysicalNode, provided: Provided, drop: bool) -> None:
    for index, child in enumerate(node.inputs):
        _apply(child, provided, drop)
        if drop and _needs_drop(child, provided.get(id(child)) == BEFORE_AFTER):
            node.inputs[index] = _drop_update_before(child)
    if isinstance(node, ph.TableSourceScan) and node.all_kinds:
        return
    if isinstance(node, _PASS_THROUGH):
        kinds = {m for child in node.inputs for m in child.changelog}
    else:
        kinds = {m for m in node.changelog if m != "UB"}
        if provided.get(id(node)) == BEFORE_AFTER:
            kinds.add("UB")
    node.changelog = tuple(m for m in ("I", "UB", "UA", "D") if m in kinds)


def require_update_before(node: ph.PhysicalNode, required: bool, drop: bool = True) -> None:
    """Mark where UPDATE_BEFORE is emitted, for a consumer of ``node`` that needs it
    (``required``) or takes updates without it: Flink tries "only after" first and falls back
    to "before and after" (FlinkChangelogModeInferenceProgram's second step). ``drop``: put
    Flink's DropUpdateBefore over a changelog source whose consumer does not need it (EXPLAIN's
    query; a collect sink at execution takes every kind, so nothing is dropped)."""
    if isinstance(node, ph.Sink) or not _updates(node):
        traits = [NONE]
    else:
        traits = [BEFORE_AFTER] if required else [ONLY_AFTER, BEFORE_AFTER]
    for trait in traits:
        provided = _satisfy(node, trait)
        if provided is not None:
            _apply(node, provided, drop)
            return
    raise TableException("Can't generate a valid execution plan for the given query: no changelog mode satisfies it.")


def _drop_update_before(node: ph.PhysicalNode) -> ph.PhysicalNode:
    """Flink's DropUpdateBefore over a changelog source whose consumer needs no UPDATE_BEFORE."""
    return ph.DropUpdateBefore([node], list(node.fields), changelog=tuple(m for m in node.changelog if m != "UB"))


def _needs_drop(node: ph.PhysicalNode, required: bool) -> bool:
    return not required and isinstance(node, ph.TableSourceScan) and "UB" in node.changelog


def apply(root: ph.PhysicalNode, collected: bool = False) -> ph.PhysicalNode:
    """``collected``: the query's rows go to a sink that takes every kind (Flink's collect
    sink at execution); EXPLAIN's query takes upserts."""
    infer(root)
    if isinstance(root, ph.Sink):
        _check_sink(root)
    require_update_before(root, False, drop=not collected)
    return _drop_update_before(root) if not collected and _needs_drop(root, False) else root
