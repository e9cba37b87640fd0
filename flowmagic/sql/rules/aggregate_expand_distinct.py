"""Batch DISTINCT aggregates as Flink 2.3 plans them (``FlinkAggregateExpandDistinctAggregatesRule``
with grouping sets): an Expand emits each row once per grouping set, tagged by the expand id
``$e``; a lower aggregation groups by the union of the sets and ``$e`` (computing the plain calls);
an upper one groups by the query's keys and reads each call through a FILTER on its set.

The rule covers one set of DISTINCT arguments next to plain calls: the sets are ``keys + args``
(id 0) and ``keys`` (the id with the DISTINCT arguments' bits set, the first argument most
significant, as Calcite's grouping id). A plain call becomes ``MIN`` of its lower result, since
each key has exactly one row in the plain set. An input field that is a DISTINCT argument and
also a plain call's argument is copied (``v AS v_0``) so the plain set still sees it.

Each aggregation takes the plan Flink's cost model finds cheapest, as a plain batch aggregate
does (``aggregate``: hash or sort, one or two phases); a sort for the upper one goes below the
Calc, which only adds the filter columns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from flowmagic.sql import physical as ph
from flowmagic.sql.logical import AggCall, Field, LogicalAggregate
from flowmagic.sql.rex import Call, InputRef, Literal, Rex
from flowmagic.sql.types import SqlType

_INT = SqlType("INTEGER", nullable=False)
_BOOL = SqlType("BOOLEAN", nullable=False)


class Aggregate(Protocol):
    """Builds the cheapest batch aggregate plan over a physical input."""

    def __call__(
        self,
        child: ph.PhysicalNode,
        grouping: tuple[int, ...],
        calls: list[AggCall],
        fields: list[Field],
        sort_below: Callable[[list[tuple[int, bool, bool]]], ph.PhysicalNode] | None = None,
    ) -> ph.PhysicalNode: ...


def applies(node: LogicalAggregate) -> bool:
    """Whether ``node`` has DISTINCT calls over one argument set beside plain calls."""
    distinct = {c.args for c in node.calls if c.distinct}
    plain = [c for c in node.calls if not c.distinct]
    # A plain call's filter column must pass the Expand unchanged: no grouping set may null it.
    grouped = set(node.group) | {a for c in node.calls if c.distinct for a in (*c.args, c.filter) if a is not None}
    plain_filters = {c.filter for c in plain if c.filter is not None}
    return (
        len(distinct) == 1
        and bool(plain)
        and all(c.function in ph.LOCAL_NAMES for c in node.calls)
        and not plain_filters & (grouped - set(node.group))
    )


def rewrite(
    node: LogicalAggregate,
    child: ph.PhysicalNode,
    aggregate: Aggregate,
) -> ph.PhysicalNode:
    """The Expand and the two aggregations computing ``node`` over its physical input ``child``."""
    keys = list(node.group)
    distinct_calls = [c for c in node.calls if c.distinct]
    plain = [c for c in node.calls if not c.distinct]

    def grouping_set(c: AggCall) -> frozenset[int]:
        return frozenset(keys) | set(c.args) | ({c.filter} if c.filter is not None else set())

    union = sorted(set().union(*(grouping_set(c) for c in distinct_calls)))
    nulled = [a for a in union if a not in keys]
    copied = [a for a in dict.fromkeys(a for c in plain for a in c.args) if a in nulled]

    def set_id(fields_in: frozenset[int]) -> int:
        # Calcite's grouping id: a bit per field of the union the set leaves out, first field highest.
        return sum(1 << (len(union) - 1 - j) for j, a in enumerate(union) if a not in fields_in)

    sets = sorted({grouping_set(c) for c in distinct_calls} | {frozenset(keys)}, key=set_id)
    ids = [set_id(g) for g in sets]

    width = len(child.fields)
    fields = [*child.fields, Field("$e", _INT)]
    fields += [Field(f"{child.fields[a].name}_0", child.fields[a].type) for a in copied]
    rows: list[list[Rex]] = []
    for members, expand_id in zip(sets, ids, strict=True):
        projects: list[Rex] = []
        for i, f in enumerate(child.fields):
            hidden = i in nulled and i not in members
            projects.append(Literal(f.type.with_nullable(True), None) if hidden else InputRef(f.type, i))
        projects.append(Literal(_INT, expand_id))
        projects += [InputRef(child.fields[a].type, a) for a in copied]
        rows.append(projects)
    fields = [Field(f.name, f.type.with_nullable(True)) if i in nulled else f for i, f in enumerate(fields)]
    expand = ph.Expand([child], fields, projects=rows)

    def plain_arg(a: int) -> int:
        return width + 1 + copied.index(a) if a in copied else a

    lower_grouping = (*union, width)
    lower_calls = [
        AggCall(c.function, tuple(plain_arg(a) for a in c.args), False, c.type, c.name, c.filter) for c in plain
    ]
    lower_fields = [fields[g] for g in lower_grouping] + [Field(c.name, c.type) for c in lower_calls]
    lower = aggregate(expand, lower_grouping, lower_calls, lower_fields)

    # The expand id maps to its grouping set's number; each set's rows pass one FILTER, and a
    # DISTINCT call's own filter column (read there only) is ANDed into its set's.
    e_index = len(union)
    distinct_args = {a for c in distinct_calls for a in c.args}
    filter_only = {union.index(a) for a in nulled if a not in distinct_args}
    kept = [i for i in range(len(lower_fields)) if i != e_index and i not in filter_only]
    branches: list[Rex] = []
    for expand_id in ids[:-1]:
        branches += [Call(_BOOL, "=", (InputRef(_INT, e_index), Literal(_INT, expand_id))), Literal(_INT, expand_id)]
    group_of = Call(_INT, "CASE", (*branches, Literal(_INT, ids[-1])))
    selected: list[Rex] = [InputRef(lower_fields[i].type, i) for i in kept]
    calc_fields = [lower_fields[i] for i in kept]
    set_filters: dict[tuple[int, int | None], int] = {}
    for members, expand_id in zip(sets, ids, strict=True):
        wanted = [c.filter for c in distinct_calls if grouping_set(c) == members]
        if members == frozenset(keys):
            wanted.append(None)
        for own in dict.fromkeys(wanted):
            test: Rex = Call(_BOOL, "=", (group_of, Literal(_INT, expand_id)))
            if own is not None:
                field = InputRef(fields[own].type, union.index(own))
                test = Call(_BOOL, "AND", (test, Call(_BOOL, "IS TRUE", (field,))))
            set_filters[(expand_id, own)] = len(selected)
            selected.append(test)
            calc_fields.append(Field(f"$g_{expand_id}", _BOOL))
    calc = ph.Calc([lower], calc_fields, projects=selected)

    def position(lower_index: int) -> int:
        return kept.index(lower_index)

    upper_calls: list[AggCall] = []
    plain_seen = 0
    for c in node.calls:
        if c.distinct:
            args = tuple(position(union.index(a)) for a in c.args)
            target = set_filters[(set_id(grouping_set(c)), c.filter)]
            upper_calls.append(AggCall(c.function, args, False, c.type, c.name, filter=target))
        else:
            result = position(len(lower_grouping) + plain_seen)
            plain_seen += 1
            target = set_filters[(set_id(frozenset(keys)), None)]
            upper_calls.append(AggCall("MIN", (result,), False, c.type.with_nullable(True), c.name, filter=target))
    upper_keys = tuple(position(union.index(k)) for k in keys)

    def sort_below(ordered: list[tuple[int, bool, bool]]) -> ph.PhysicalNode:
        below = [(kept[k], desc, nulls) for k, desc, nulls in ordered]
        return ph.Calc([ph.Sort([lower], list(lower.fields), keys=below)], calc_fields, projects=selected)

    out_fields = [calc_fields[k] for k in upper_keys] + [Field(c.name, c.type) for c in upper_calls]
    upper = aggregate(calc, upper_keys, upper_calls, out_fields, sort_below)
    if [f.type for f in out_fields] == [f.type for f in node.fields]:
        return upper
    # Calcite converts back to the aggregate's row type; its casts take their operand's
    # nullability (``makeCast`` matching nullability), so they print as the operand's type.
    converted: list[Rex] = [
        InputRef(f.type, i) if f.type == want.type else Call(f.type, "CAST", (InputRef(f.type, i),))
        for i, (f, want) in enumerate(zip(out_fields, node.fields, strict=True))
    ]
    return ph.Calc([upper], out_fields, projects=converted)
