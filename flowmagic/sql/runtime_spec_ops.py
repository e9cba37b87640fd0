"""What the windowing, join, ranking and sorting ExecNodes run: their runtime specs
(:mod:`flowmagic.graph.sql_runtime_ops`), as :mod:`flowmagic.sql.runtime_spec` fills the others'.
Keys are the fields the operator's input is hashed on (its key selector's), typed as Flink types
them; conditions are generated over the joined row (left fields, then right fields)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime import AggCallSpec, Code, SqlRuntimeSpec
from flowmagic.graph.sql_runtime_ops import (
    BatchJoinSpec,
    BatchRankSpec,
    DeduplicateSpec,
    IntervalJoinSpec,
    JoinSpec,
    MemberSpec,
    MultipleInputSpec,
    OverAggregateSpec,
    RankSpec,
    SortLimitSpec,
    WindowAggregateSpec,
    WindowSpec,
    WindowTableFunctionSpec,
)
from flowmagic.sql import logical
from flowmagic.sql import physical as ph
from flowmagic.sql.codegen import runtime_type, scalar_code
from flowmagic.sql.exec_nodes import ExecNode
from flowmagic.sql.logical import AggCall, Field
from flowmagic.sql.multiple_input import MultipleInputExecNode
from flowmagic.sql.rex import Call, InputRef, Rex

__all__ = ["operator_runtime_spec"]

#: What a member of a MultipleInput runs: ``spec_of(kind, node)`` (the runtime spec of any kind).
SpecOf = Callable[[OperatorKind, ExecNode], SqlRuntimeSpec | None]


def _names_types(fields: list[Field]) -> dict[str, Any]:
    return {
        "field_names": tuple(f.name for f in fields),
        "field_types": tuple(runtime_type(f.type) for f in fields),
    }


def _millis(literal: Any) -> int:
    return int(str(literal.value))


def _window(window: logical.WindowSpec, time_fields: list[Field], zone: str) -> WindowSpec:
    """The window's spec; ``time_fields``: the fields its time column indexes."""
    sizes = [_millis(s) for s in window.sizes]
    if window.kind == "SESSION":
        return WindowSpec("SESSION", gap=sizes[0], time_field=window.time_column)
    # Flink's TimeWindowUtil.getShiftTimeZone: the session's zone over a TIMESTAMP_LTZ.
    ltz = runtime_type(time_fields[window.time_column].type).startswith("TIMESTAMP_LTZ")
    shift = zone if ltz else "UTC"
    if window.kind == "TUMBLE":
        return WindowSpec("TUMBLE", size=sizes[0], time_field=window.time_column, zone=shift)
    # HOP (slide, size) and CUMULATE (step, max size), in the TVF's argument order.
    return WindowSpec(window.kind, size=sizes[1], step=sizes[0], time_field=window.time_column, zone=shift)


def _call(call: AggCall, input_fields: list[Field]) -> AggCallSpec:
    arg_type = runtime_type(input_fields[call.args[0]].type) if call.args else None
    return AggCallSpec(call.function, call.args, call.distinct, call.filter, runtime_type(call.type), arg_type)


def _hash_keys(node: ExecNode, side: int = 0) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The fields input ``side`` of ``node`` is hashed on (its exchange's), and their types."""
    exchange = node.inputs[side]
    keys = exchange.input_properties[0].keys if exchange.input_properties else ()
    return keys, tuple(runtime_type(exchange.fields[k].type) for k in keys)


def _condition(rex: Rex | None) -> Code:
    if rex is None:
        return Code("def condition(r):\n    return True\n")
    return scalar_code("condition", rex)


def _sort_keys(keys: list[tuple[int, bool, bool]]) -> tuple[tuple[int, bool, bool], ...]:
    return tuple((index, descending, nulls_last) for index, descending, nulls_last in keys)


def _equi_keys(rex: Rex | None, left_width: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The key fields of each side that the condition's ``=`` conjuncts equate."""
    conjuncts = list(rex.operands) if isinstance(rex, Call) and rex.operator == "AND" else [rex]
    left: list[int] = []
    right: list[int] = []
    for conjunct in conjuncts:
        if not (isinstance(conjunct, Call) and conjunct.operator == "=" and len(conjunct.operands) == 2):
            continue
        a, b = conjunct.operands
        if isinstance(a, InputRef) and isinstance(b, InputRef):
            low, high = sorted((a.index, b.index))
            if low < left_width <= high:
                left.append(low)
                right.append(high - left_width)
    return tuple(left), tuple(right)


def _window_aggregate(kind: OperatorKind, node: ExecNode, physical: Any, zone: str) -> WindowAggregateSpec:
    assert physical.window is not None
    fields = list(node.fields)
    if kind == OperatorKind.SQL_LOCAL_WINDOW_AGGREGATE:
        input_fields = physical.inputs[0].fields
        return WindowAggregateSpec(
            window=_window(physical.window, input_fields, zone),
            grouping=physical.grouping,
            key_fields=(),
            key_types=(),
            calls=tuple(_call(c, input_fields) for c in physical.calls),
            phase="local",
            **_names_types(fields),
        )
    if kind == OperatorKind.SQL_GLOBAL_WINDOW_AGGREGATE:
        local = physical.inputs[0].inputs[0] if isinstance(physical.inputs[0], ph.Exchange) else physical.inputs[0]
        time_fields = local.inputs[0].fields
        calls = tuple(_call(c, time_fields) for c in physical.calls)
        phase = "global"
    else:
        time_fields = physical.inputs[0].fields
        calls = tuple(_call(c, time_fields) for c in physical.calls)
        phase = "single"
    key_fields, key_types = _hash_keys(node)
    return WindowAggregateSpec(
        window=_window(physical.window, time_fields, zone),
        grouping=physical.grouping,
        key_fields=key_fields,
        key_types=key_types,
        calls=calls,
        phase=phase,
        properties=physical.properties,
        **_names_types(fields),
    )


def _join(node: ExecNode, physical: ph.Join | ph.IntervalJoin) -> JoinSpec:
    left_keys, left_types = _hash_keys(node, 0)
    right_keys, right_types = _hash_keys(node, 1)
    common: dict[str, Any] = {
        "join_type": physical.join_type,
        "key_fields": (left_keys, right_keys),
        "key_types": (left_types, right_types),
        "widths": (len(physical.inputs[0].fields), len(physical.inputs[1].fields)),
        "condition": _condition(physical.condition),
        **_names_types(list(node.fields)),
    }
    if isinstance(physical, ph.IntervalJoin):
        return IntervalJoinSpec(
            lower=physical.lower,
            upper=physical.upper,
            left_time=physical.left_time,
            right_time=physical.right_time,
            rowtime=physical.rowtime,
            **common,
        )
    return JoinSpec(**common)


def _rank(node: ExecNode, physical: ph.Rank) -> RankSpec | DeduplicateSpec:
    keys, types = _hash_keys(node)
    fields = list(node.fields)
    time = physical.deduplicate
    if node.type.startswith("stream-exec-deduplicate") and time is not None:
        order_field, descending, _ = physical.order[0]
        return DeduplicateSpec(
            keep_last=descending,
            rowtime=order_field if time.time_attribute == "ROWTIME" else None,
            key_fields=keys,
            key_types=types,
            **_names_types(fields),
        )
    return RankSpec(
        strategy=physical.strategy,
        key_fields=keys,
        key_types=types,
        order=_sort_keys(physical.order),
        rank_start=physical.rank_start,
        rank_end=physical.rank_end,
        output_rank=physical.output_rank,
        **_names_types(fields),
    )


def _sort_limit(node: ExecNode, physical: ph.SortLimit) -> RankSpec | SortLimitSpec:
    fields = list(node.fields)
    if physical.batch_global is None:
        # Streaming: Flink's Top-N over one partition of all rows, without the rank.
        return RankSpec(
            strategy=physical.strategy,
            key_fields=(),
            key_types=(),
            order=_sort_keys(physical.keys),
            rank_start=physical.offset + 1,
            rank_end=physical.offset + physical.fetch,
            output_rank=False,
            **_names_types(fields),
        )
    order = _sort_keys(physical.keys)
    if physical.batch_global:
        return SortLimitSpec(order=order, offset=physical.offset, fetch=physical.fetch, **_names_types(fields))
    return SortLimitSpec(order=order, fetch=physical.offset + physical.fetch, **_names_types(fields))


def _batch_join(node: ExecNode, physical: ph.NestedLoopJoin | ph.HashJoin) -> BatchJoinSpec:
    left_width = len(physical.inputs[0].fields)
    keys = _equi_keys(physical.condition, left_width) if isinstance(physical, ph.HashJoin) else ((), ())
    return BatchJoinSpec(
        join_type=physical.join_type,
        widths=(left_width, len(physical.inputs[1].fields)),
        build=physical.build,
        keys=keys,
        condition=_condition(physical.condition),
        **_names_types(list(node.fields)),
    )


def _multiple_input(
    node: MultipleInputExecNode,
    inputs_in_order: list[ExecNode],
    kind_of: Callable[[ExecNode], OperatorKind],
    spec_of: SpecOf,
) -> MultipleInputSpec:
    assert node.root is not None
    # Members inputs first: a member's outputs feed the ones after it, the root last.
    ordered: list[ExecNode] = []
    members = {id(m) for m in node.members}

    def visit(member: ExecNode) -> None:
        for child in member.inputs:
            if id(child) in members and child not in ordered:
                visit(child)
        if member not in ordered:
            ordered.append(member)

    visit(node.root)
    position = {id(m): i for i, m in enumerate(ordered)}
    outside = {id(child): i for i, child in enumerate(inputs_in_order)}
    specs = []
    for member in ordered:
        sources = tuple(
            ("member", position[id(child)]) if id(child) in members else ("input", outside[id(child)])
            for child in member.inputs
        )
        kind = kind_of(member)
        specs.append(MemberSpec(kind.value, spec_of(kind, member), sources, f"{member.name}[{member.id}]"))
    return MultipleInputSpec(members=tuple(specs), **_names_types(list(node.fields)))


def operator_runtime_spec(
    kind: OperatorKind,
    node: ExecNode,
    *,
    inputs_in_order: list[ExecNode] | None = None,
    kind_of: Callable[[ExecNode], OperatorKind] | None = None,
    spec_of: SpecOf | None = None,
    zone: str = "UTC",
) -> SqlRuntimeSpec | None:
    """The spec of ``node``'s operator of ``kind``, if it is one of these operators' (a
    MultipleInput also needs its inputs in the transformation's order and how to make its
    members' specs; ``zone``: ``table.local-time-zone``)."""
    physical = node.physical
    fields = list(node.fields)
    if isinstance(node, MultipleInputExecNode):
        if inputs_in_order is None or kind_of is None or spec_of is None:
            return None
        return _multiple_input(node, inputs_in_order, kind_of, spec_of)
    if isinstance(physical, ph.WindowTableFunction):
        assert physical.window is not None
        window = _window(physical.window, physical.inputs[0].fields, zone)
        return WindowTableFunctionSpec(window=window, **_names_types(fields))
    if isinstance(physical, ph.LocalWindowAggregate | ph.GlobalWindowAggregate | ph.WindowAggregate):
        return _window_aggregate(kind, node, physical, zone)
    if isinstance(physical, ph.Join | ph.IntervalJoin):
        return _join(node, physical)
    if isinstance(physical, ph.Rank):
        return _rank(node, physical)
    if isinstance(physical, ph.SortLimit):
        return _sort_limit(node, physical)
    if isinstance(physical, ph.BatchRank):
        return BatchRankSpec(
            function=physical.function,
            partition=physical.partition,
            order=tuple(k[0] for k in physical.order),
            rank_start=physical.rank_start,
            rank_end=physical.rank_end,
            output_rank=len(physical.fields) > len(physical.inputs[0].fields),
            **_names_types(fields),
        )
    if isinstance(physical, ph.OverAggregate):
        return OverAggregateSpec(
            partition=physical.partition,
            order=tuple(k[0] for k in physical.order),
            calls=tuple(physical.calls),
            **_names_types(fields),
        )
    if isinstance(physical, ph.NestedLoopJoin | ph.HashJoin):
        return _batch_join(node, physical)
    return None
