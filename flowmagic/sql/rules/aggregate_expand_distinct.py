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
    return len(distinct) == 1 and bool(plain) and all(c.function in ph.LOCAL_NAMES for c in node.calls)


def rewrite(
    node: LogicalAggregate,
    child: ph.PhysicalNode,
    aggregate: Aggregate,
) -> ph.PhysicalNode:
    """The Expand and the two aggregations computing ``node`` over its physical input ``child``."""
    keys = list(node.group)
    distinct_args = next(c.args for c in node.calls if c.distinct)
    union = sorted(set(keys) | set(distinct_args))
    nulled = [a for a in union if a not in keys]
    plain = [c for c in node.calls if not c.distinct]
    copied = [a for a in dict.fromkeys(a for c in plain for a in c.args) if a in nulled]

    width = len(child.fields)
    fields = [*child.fields, Field("$e", _INT)]
    fields += [Field(f"{child.fields[a].name}_0", child.fields[a].type) for a in copied]
    ids = [0, (1 << len(nulled)) - 1]
    rows: list[list[Rex]] = []
    for row, expand_id in enumerate(ids):
        projects: list[Rex] = []
        for i, f in enumerate(child.fields):
            hidden = row == 1 and i in nulled
            projects.append(Literal(f.type.with_nullable(True), None) if hidden else InputRef(f.type, i))
        projects.append(Literal(_INT, expand_id))
        projects += [InputRef(child.fields[a].type, a) for a in copied]
        rows.append(projects)
    fields = [Field(f.name, f.type.with_nullable(True)) if i in nulled else f for i, f in enumerate(fields)]
    expand = ph.Expand([child], fields, projects=rows)

    def plain_arg(a: int) -> int:
        return width + 1 + copied.index(a) if a in copied else a

    lower_grouping = (*union, width)
    lower_calls = [AggCall(c.function, tuple(plain_arg(a) for a in c.args), False, c.type, c.name) for c in plain]
    lower_fields = [fields[g] for g in lower_grouping] + [Field(c.name, c.type) for c in lower_calls]
    lower = aggregate(expand, lower_grouping, lower_calls, lower_fields)

    # The expand id maps to its grouping set's number; each set's rows pass one FILTER.
    e_index = len(union)
    kept = [i for i in range(len(lower_fields)) if i != e_index]
    group_of = Call(
        _INT,
        "CASE",
        (Call(_BOOL, "=", (InputRef(_INT, e_index), Literal(_INT, 0))), Literal(_INT, 0), Literal(_INT, 1)),
    )
    selected: list[Rex] = [InputRef(lower_fields[i].type, i) for i in kept]
    selected += [Call(_BOOL, "=", (group_of, Literal(_INT, g))) for g in range(2)]
    calc_fields = [lower_fields[i] for i in kept] + [Field(f"$g_{g}", _BOOL) for g in range(2)]
    calc = ph.Calc([lower], calc_fields, projects=selected)

    def position(lower_index: int) -> int:
        return kept.index(lower_index)

    upper_calls: list[AggCall] = []
    plain_seen = 0
    for c in node.calls:
        if c.distinct:
            args = tuple(position(union.index(a)) for a in c.args)
            upper_calls.append(AggCall(c.function, args, False, c.type, c.name, filter=len(kept)))
        else:
            result = position(len(lower_grouping) + plain_seen)
            plain_seen += 1
            upper_calls.append(
                AggCall("MIN", (result,), False, c.type.with_nullable(True), c.name, filter=len(kept) + 1)
            )
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
