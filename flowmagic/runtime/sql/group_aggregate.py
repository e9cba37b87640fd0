"""Flink's streaming GroupAggregate (``GroupAggFunction``): per key, accumulators in the
keyed state ``accState``; each input row updates them and emits the change of the key's
result row: ``+I`` for a new group, ``-U`` of the old and ``+U`` of the new result, nothing
when the result did not change (and no state TTL is set), ``-D`` when a group's last row was
retracted (its state then cleared). With ``table.exec.state.ttl``, a group not written for
that long (processing time) is forgotten: its next row starts it again with ``+I``."""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime import AggregateSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.aggregate_functions import aggregate_function
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
        self.grouping = spec.grouping
        self.functions = [aggregate_function(c, spec.retracting_input) for c in spec.calls]
        # Per call: its function, its argument field (None: COUNT(*)), its filter field.
        self.calls = [
            (f, c.args[0] if c.args else None, c.filter) for f, c in zip(self.functions, spec.calls, strict=True)
        ]
        self.ttl = spec.state_ttl_ms
        # With a state TTL, Flink emits an unchanged result too (to refresh it downstream).
        self.emit_unchanged = self.ttl > 0
        backend = self.keyed_state
        backend.declare(ACC_STATE, "VALUE", "RowData")
        name = f"value:{ACC_STATE}"
        self.state = backend.table(name)
        if self.ttl > 0:
            # Flink's StateConfigUtil.createTtlConfig: processing time, set on create and write,
            # expired values never returned (nor written into snapshots).
            clock, ttl = task.clock, self.ttl
            backend.snapshot_filters[name] = lambda stored: None if stored.timestamp + ttl <= clock.now() else stored

    def _result(self, key_fields: tuple[Any, ...], accumulators: list[Any]) -> tuple[Any, ...]:
        return (
            *key_fields,
            *(f.value(a) for f, a in zip(self.functions, accumulators[1:], strict=True)),
        )

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.process_batch([value])

    def process_batch(self, values: list[Any]) -> None:
        out: list[Any] = []
        append = out.append
        backend = self.keyed_state
        state = self.state
        key_of = self.key_of
        calls = self.calls
        emit_unchanged = self.emit_unchanged
        ttl, now = self.ttl, self.task.clock.now
        row: Any = None
        try:
            for row in values:
                key = key_of(row)
                backend.current_key = key
                kind = row[-1]
                accumulate = kind in (INSERT, UPDATE_AFTER)
                accumulators: list[Any] = state.get(key)  # type: ignore[assignment]
                if ttl and accumulators is not None:
                    stamped: Any = accumulators
                    accumulators = None if stamped.timestamp + ttl <= now() else stamped.value  # type: ignore[assignment]
                if accumulators is None:
                    if not accumulate:
                        # A retraction of a row this operator never saw (its state expired).
                        continue
                    accumulators = [0, *(f.create() for f, _, _ in calls)]
                    previous = None
                else:
                    previous = self._result(key.fields, accumulators)
                accumulators[0] += 1 if accumulate else -1
                for index, (function, arg, condition) in enumerate(calls, 1):
                    if condition is not None and row[condition] is not True:
                        continue
                    if arg is None:
                        argument = None
                    else:
                        argument = row[arg]
                        if argument is None:
                            continue
                    if accumulate:
                        accumulators[index] = function.add(accumulators[index], argument)
                    else:
                        accumulators[index] = function.retract(accumulators[index], argument)
                if accumulators[0] <= 0:
                    state.pop(key, None)
                    if previous is not None:
                        append((*previous, DELETE))
                    continue
                state[key] = TtlValue(accumulators, now()) if ttl else accumulators
                result = self._result(key.fields, accumulators)
                if previous is None:
                    append((*result, INSERT))
                elif result != previous or emit_unchanged:
                    append((*previous, UPDATE_BEFORE))
                    append((*result, UPDATE_AFTER))
        except Exception as error:
            raise self.fail(error, row) from error
        if out:
            self.output.collect_batch(out)
