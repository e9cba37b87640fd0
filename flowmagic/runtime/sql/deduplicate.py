"""Flink's streaming Deduplicate (ROW_NUMBER() = 1 over a time attribute), per key:

- processing time, first row (``ProcTimeDeduplicateKeepFirstRowFunction``): the first row,
  ``+I``, the others dropped (state ``deduplicate-state``);
- processing time, last row (``ProcTimeDeduplicateKeepLastRowFunction``): ``+I`` of the first
  row, then ``-U`` of the kept row and ``+U`` of each new one;
- event time, first row, insert-only (``RowTimeDeduplicateKeepFirstRowFunction``): the row
  with the smallest time waits (``waiting-to-emit-on-timer``) until the watermark passes it,
  then is emitted once (``already-emitted-state-boolean``); rows behind the watermark are late
  and dropped;
- event time otherwise (``RowTimeDeduplicateFunction``): the row replaces the kept one when it
  is later (last row: not earlier; first row: earlier), emitting ``+I`` or ``-U``/``+U``.

With ``table.exec.state.ttl`` each key's state expires that long (processing time) after it
was written; the key's next row is then a first row again (``+I``). Keeping the last row on
processing time, a row equal to the kept first row is sent (``-U``/``+U``) only with a TTL.
"""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime_ops import DeduplicateSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.keys import RowKey
from flowmagic.runtime.sql.operator import INSERT, UPDATE_AFTER, UPDATE_BEFORE
from flowmagic.runtime.sql.state_retention import state_retention
from flowmagic.runtime.sql.timed_operator import TimedSqlOperator

__all__ = ["Deduplicate"]

STATE = "deduplicate-state"
WAITING_STATE = "waiting-to-emit-on-timer"
EMITTED_STATE = "already-emitted-state-boolean"


@register(OperatorKind.SQL_DEDUPLICATE)
class Deduplicate(TimedSqlOperator):
    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, DeduplicateSpec)
        self.key_of = RowKey(spec.key_fields, spec.key_types)
        self.keep_last = spec.keep_last
        self.rowtime = spec.rowtime
        self.update_before = spec.update_before
        #: Event time, first row, insert-only output: emitted when the watermark passes it.
        self.on_watermark = self.rowtime is not None and not self.keep_last
        backend = self.keyed_state
        # The tables hold TtlValues of the rows and flags with a retention.
        if self.on_watermark:
            backend.declare(WAITING_STATE, "VALUE", "RowData")
            backend.declare(EMITTED_STATE, "VALUE", "Boolean")
            self.waiting: dict[Any, Any] = backend.table(f"value:{WAITING_STATE}")
            self.emitted: dict[Any, Any] = backend.table(f"value:{EMITTED_STATE}")
            tables = [f"value:{WAITING_STATE}", f"value:{EMITTED_STATE}"]
        else:
            backend.declare(STATE, "VALUE", "Boolean" if self._first_on_processing_time else "RowData")
            self.state: dict[Any, Any] = backend.table(f"value:{STATE}")
            tables = [f"value:{STATE}"]
        self.retention = state_retention(spec.state_ttl_ms, task.clock, backend, tables)
        #: Flink's metric of the rows dropped for being late.
        self.late_dropped = self.runtime_context.get_metrics_group().counter("numLateRecordsDropped")

    @property
    def _first_on_processing_time(self) -> bool:
        return self.rowtime is None and not self.keep_last

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            key = self.key_of(value)
            self.keyed_state.current_key = key
            row = tuple(value[:-1])
            if self.on_watermark:
                self._first_on_event_time(key, row)
            elif self._first_on_processing_time:
                if self._get(self.state, key) is None:
                    self._put(self.state, key, True)
                    self.output.collect((*row, INSERT), None)
            elif self.rowtime is None:
                self._replace(key, row)
            else:
                previous = self._get(self.state, key)
                if previous is None or self._later(previous, row):
                    self._replace(key, row)
        except Exception as error:
            raise self.fail(error, value) from error

    def _later(self, previous: tuple[Any, ...], row: tuple[Any, ...]) -> bool:
        """Whether ``row`` replaces the kept ``previous`` (Flink's ``shouldKeepCurrentRow``)."""
        assert self.rowtime is not None
        if self.keep_last:
            return bool(previous[self.rowtime] <= row[self.rowtime])
        return bool(row[self.rowtime] < previous[self.rowtime])

    def _get(self, table: dict[Any, Any], key: Any) -> Any:
        """The key's value in ``table`` (None: none, or it expired)."""
        stored = table.get(key)
        if self.retention is None or stored is None:
            return stored
        value = self.retention.live(stored)
        if value is None:
            del table[key]
        return value

    def _put(self, table: dict[Any, Any], key: Any, value: Any) -> None:
        table[key] = value if self.retention is None else self.retention.stamp(value)

    def _replace(self, key: Any, row: tuple[Any, ...]) -> None:
        # The state keeps the row as it was sent, its kind last (Flink keeps the row object it
        # emitted, whose kind the emission set).
        previous = self.state.get(key) if self.retention is None else self._get(self.state, key)
        collect = self.output.collect
        if previous is None:
            record = (*row, INSERT)
            self._put(self.state, key, record)
            collect(record, None)
            return
        if previous[-1] == INSERT and self.rowtime is None and self.retention is None and previous[:-1] == row:
            # Flink's processLastRowOnProcTime: a row equal to the kept one, kind included, is
            # dropped (the kept one is then the key's first row, sent as +I); with a retention
            # it is sent anyway, to keep downstream state alive.
            return
        record = (*row, UPDATE_AFTER)
        self._put(self.state, key, record)
        if self.update_before:
            collect((*previous[:-1], UPDATE_BEFORE), None)
        collect(record, None)

    def _first_on_event_time(self, key: Any, row: tuple[Any, ...]) -> None:
        assert self.rowtime is not None
        time = row[self.rowtime]
        if time < self.watermark:
            self.late_dropped.inc()
            return
        if self._get(self.emitted, key):
            return
        previous = self._get(self.waiting, key)
        if previous is None or time < previous[self.rowtime]:
            if previous is not None:
                self.timers.delete_event_time_timer(previous[self.rowtime])
            self.timers.register_event_time_timer(time)
            self._put(self.waiting, key, row)

    def on_timer(self, timestamp: int, key: Any) -> None:
        row = self._get(self.waiting, key)
        self.waiting.pop(key, None)
        if row is not None:
            self.output.collect((*row, INSERT), None)
        self._put(self.emitted, key, True)
