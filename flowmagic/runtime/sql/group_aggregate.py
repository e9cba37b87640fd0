"""Flink's streaming GroupAggregate (``GroupAggFunction``): per key, accumulators in the
keyed state ``accState``; each input row updates them and emits the change of the key's
result row: ``+I`` for a new group, ``-U`` of the old and ``+U`` of the new result, nothing
when the result did not change (and no state TTL is set), ``-D`` when a group's last row was
retracted (its state then cleared). With ``table.exec.state.ttl``, a group not written for
that long (processing time) is forgotten: its next row starts it again with ``+I``.

Every row costs a few microseconds of Python at most, so the loop over a batch is made for
each operator from its spec (the grouping's and the calls' field indexes, which functions):
the counts update and read their accumulators inline, other functions through their
:class:`~flowmagic.runtime.sql.aggregate_functions.AggregateFunction`.
"""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime import AggregateSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.aggregate_functions import AggregateFunction, Count, aggregate_function
from flowmagic.runtime.sql.keys import RowKey
from flowmagic.runtime.sql.operator import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, SqlOperator
from flowmagic.runtime.state.state_ttl import TtlValue

__all__ = ["GroupAggregate"]

#: GroupAggFunction's state: ``ValueState<RowData> accState``.
ACC_STATE = "accState"


@register(OperatorKind.SQL_GROUP_AGGREGATE)
class GroupAggregate(SqlOperator):
    """Streaming group aggregation with retraction, keyed by the group's fields."""

    keyed = True
    tracks_changes = True

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, AggregateSpec)
        key_types = tuple(spec.field_types[: len(spec.grouping)])
        self.key_of = RowKey(spec.grouping, key_types)
        self.functions = [aggregate_function(c, spec.retracting_input) for c in spec.calls]
        self.ttl = spec.state_ttl_ms
        backend = self.keyed_state
        backend.declare(ACC_STATE, "VALUE", "RowData")
        name = f"value:{ACC_STATE}"
        self.state = backend.table(name)
        if self.ttl > 0:
            # Flink's StateConfigUtil.createTtlConfig: processing time, set on create and write,
            # expired values never returned (nor written into snapshots).
            clock, ttl = task.clock, self.ttl
            backend.snapshot_filters[name] = lambda stored: None if stored.timestamp + ttl <= clock.now() else stored
        calls = [(f, c.args[0] if c.args else None, c.filter) for f, c in zip(self.functions, spec.calls, strict=True)]
        self._process = _compile_loop(spec.grouping, calls, self.ttl, self.fail)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.process_batch([value])

    def process_batch(self, values: list[Any]) -> None:
        out: list[Any] = []
        key_of = self.key_of
        self._process(
            values,
            out,
            self.state,
            self.keyed_state.touched,
            key_of.fields_of,
            key_of.keys,
            key_of.key_of_fields,
            self.task.clock.now,
        )
        if out:
            self.output.collect_batch(out)


def _compile_loop(
    grouping: tuple[int, ...],
    calls: list[tuple[AggregateFunction, int | None, int | None]],
    ttl: int,
    fail: Any,
) -> Any:
    """``process(rows, out, state, touched, fields_of, keys, key_of_fields, now)``: the rows'
    changes of their groups' results appended to ``out``, as Flink's GroupAggFunction emits
    them. Made from field indexes and the calls' functions only (no text of the query's)."""
    namespace: dict[str, Any] = {"_fail": fail, "_TtlValue": TtlValue}
    creates: list[str] = []
    adds: list[str] = []
    retracts: list[str] = []
    reads_before: list[str] = []
    reads_after: list[str] = []
    changed: list[str] = []
    for index, (function, arg, condition) in enumerate(calls, 1):
        namespace[f"_f{index}"] = function
        inline = type(function) is Count
        creates.append("0" if inline else f"_f{index}.create()")
        reads_before.append(f"v{index} = a[{index}]" if inline else f"v{index} = _f{index}.value(a[{index}])")
        reads_after.append(f"w{index} = a[{index}]" if inline else f"w{index} = _f{index}.value(a[{index}])")
        changed.append(f"(w{index} is not v{index} and w{index} != v{index})")
        for step, lines in (("add", adds), ("retract", retracts)):
            if inline:
                update = f"a[{index}] {'+' if step == 'add' else '-'}= 1"
            else:
                update = f"a[{index}] = _f{index}.{step}(a[{index}], {'None' if arg is None else 'x'})"
            # As Flink's: a row the call's FILTER rejects, or whose argument is null, leaves it.
            if arg is None and condition is None:
                lines.append(update)
            elif arg is None:
                lines.append(f"if row[{condition}] is True: {update}")
            elif condition is None:
                lines += [f"x = row[{arg}]", f"if x is not None: {update}"]
            else:
                lines += [f"if row[{condition}] is True:", f"    x = row[{arg}]", f"    if x is not None: {update}"]
    keys = "".join(f"row[{g}], " for g in grouping)
    before = f"{keys}{''.join(f'v{i}, ' for i in range(1, len(calls) + 1))}"
    after = f"{keys}{''.join(f'w{i}, ' for i in range(1, len(calls) + 1))}"
    unwrap = ["if a is not None:", f"    a = None if a.timestamp + {ttl} <= now() else a.value"] if ttl > 0 else []
    store = ["state[key] = _TtlValue(a, now())"] if ttl > 0 else []

    def block(lines: list[str], depth: int) -> str:
        return "".join(f"{'    ' * depth}{line}\n" for line in lines)

    source = (
        "def process(rows, out, state, touched, fields_of, keys, key_of_fields, now):\n"
        "    append = out.append\n"
        "    get = state.get\n"
        "    key_get = keys.get\n"
        "    track = None if touched is None else touched.add\n"
        "    row = None\n"
        "    try:\n"
        "        for row in rows:\n"
        "            fields = fields_of(row)\n"
        "            key = key_get(fields)\n"
        "            if key is None:\n"
        "                key = key_of_fields(fields)\n"
        "            if track is not None:\n"
        "                track(key)\n"
        "            a = get(key)\n"
        f"{block(unwrap, 3)}"
        f"            kind = row[-1]\n"
        f"            if kind == {INSERT} or kind == {UPDATE_AFTER}:\n"
        "                if a is None:\n"
        f"                    a = [1, {''.join(c + ', ' for c in creates)}]\n"
        f"{block(adds, 5)}"
        f"                    state[key] = {'_TtlValue(a, now())' if ttl > 0 else 'a'}\n"
        f"{block(reads_after, 5)}"
        f"                    append(({after}{INSERT}))\n"
        "                    continue\n"
        f"{block(reads_before, 4)}"
        "                a[0] += 1\n"
        f"{block(adds, 4)}"
        "            else:\n"
        "                if a is None:\n"
        "                    # A retraction of a row this operator never saw (its state expired).\n"
        "                    continue\n"
        f"{block(reads_before, 4)}"
        "                a[0] -= 1\n"
        f"{block(retracts, 4)}"
        "                if a[0] <= 0:\n"
        "                    state.pop(key, None)\n"
        f"                    append(({before}{DELETE}))\n"
        "                    continue\n"
        f"{block(store, 3)}"
        f"{block(reads_after, 3)}"
        f"            if {' or '.join(changed) if changed else 'False'}{' or True' if ttl > 0 else ''}:\n"
        f"                append(({before}{UPDATE_BEFORE}))\n"
        f"                append(({after}{UPDATE_AFTER}))\n"
        "    except Exception as error:\n"
        "        raise _fail(error, row) from error\n"
    )
    # Built here from indexes and function kinds alone: no text of the query's.
    exec(compile(source, "<flowmagic SQL GroupAggregate>", "exec"), namespace)
    return namespace["process"]
