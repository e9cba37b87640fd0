"""AVG becomes SUM / COUNT (Calcite's AggregateReduceFunctionsRule): equal calls are shared, SUM of
a NOT NULL argument in a grouped aggregate is ``$SUM0``, COUNT of a NOT NULL argument is COUNT(),
and a Calc on top computes the results. Flink's cost-based logical phase keeps the reduced plan
only when it has fewer aggregate calls (the SUM and COUNT already exist), so this rule does too."""

from __future__ import annotations

from dataclasses import replace

from flowmagic.sql.logical import AggCall, Field, LogicalAggregate, LogicalCalc, RelNode
from flowmagic.sql.rex import Call, InputRef, Rex
from flowmagic.sql.rules import bottom_up
from flowmagic.sql.types import BIGINT, arithmetic


def _reduce(node: RelNode) -> RelNode:
    if not isinstance(node, LogicalAggregate) or not any(c.function == "AVG" for c in node.calls):
        return node
    source = node.inputs[0]
    grouped = bool(node.group)
    groups = len(node.group)
    calls: list[AggCall] = []

    def add(call: AggCall) -> Rex:
        for i, existing in enumerate(calls):
            same = (existing.function, existing.args, existing.distinct, existing.filter)
            if same == (call.function, call.args, call.distinct, call.filter):
                return InputRef(existing.type, groups + i)
        calls.append(replace(call, name=call.name or f"$f{groups + len(calls)}"))
        return InputRef(call.type, groups + len(calls) - 1)

    def count_of(call: AggCall, name: str) -> AggCall:
        args = call.args
        if args and not source.fields[args[0]].type.nullable and not call.distinct:
            args = ()
        return replace(call, function="COUNT", args=args, type=BIGINT.with_nullable(False), name=name)

    def sum_of(call: AggCall, name: str) -> AggCall:
        arg_type = source.fields[call.args[0]].type
        if grouped and not arg_type.nullable:
            return replace(call, function="$SUM0", type=call.type.with_nullable(False), name=name)
        return replace(call, function="SUM", name=name)

    results: list[Rex] = []
    for call in node.calls:
        if call.function == "AVG":
            total = add(sum_of(call, ""))
            count = add(count_of(call, ""))
            divided = Call(arithmetic("/", total.type, count.type), "/", (total, count))
            results.append(Call(call.type, "CAST", (divided,)))
        elif call.function == "SUM":
            results.append(add(sum_of(call, call.name)))
        elif call.function == "COUNT":
            results.append(add(count_of(call, call.name)))
        else:
            results.append(add(call))
    if len(calls) >= len(node.calls):
        return node
    fields = list(node.fields[:groups]) + [Field(c.name, c.type) for c in calls]
    aggregate = LogicalAggregate(node.inputs, fields, group=node.group, calls=calls)
    projects: list[Rex] = [InputRef(f.type, i) for i, f in enumerate(node.fields[:groups])] + results
    return LogicalCalc([aggregate], node.fields, projects, None)


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _reduce)
