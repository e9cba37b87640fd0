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
        if self.on_watermark:
            backend.declare(WAITING_STATE, "VALUE", "RowData")
            backend.declare(EMITTED_STATE, "VALUE", "Boolean")
            self.waiting: dict[Any, tuple[Any, ...]] = backend.table(f"value:{WAITING_STATE}")
            self.emitted: dict[Any, bool] = backend.table(f"value:{EMITTED_STATE}")
        else:
            backend.declare(STATE, "VALUE", "Boolean" if self._first_on_processing_time else "RowData")
            self.state: dict[Any, Any] = backend.table(f"value:{STATE}")
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
                if key not in self.state:
                    self.state[key] = True
                    self.output.collect((*row, INSERT), None)
            elif self.rowtime is None:
                self._replace(key, row)
            else:
                previous = self.state.get(key)
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

    def _replace(self, key: Any, row: tuple[Any, ...]) -> None:
        previous = self.state.get(key)
        self.state[key] = row
        collect = self.output.collect
        if previous is None:
            collect((*row, INSERT), None)
            return
        if self.update_before:
            collect((*previous, UPDATE_BEFORE), None)
        collect((*row, UPDATE_AFTER), None)

    def _first_on_event_time(self, key: Any, row: tuple[Any, ...]) -> None:
        assert self.rowtime is not None
        time = row[self.rowtime]
        if time < self.watermark:
            self.late_dropped.inc()
            return
        if self.emitted.get(key):
            return
        previous = self.waiting.get(key)
        if previous is None or time < previous[self.rowtime]:
            if previous is not None:
                self.timers.delete_event_time_timer(previous[self.rowtime])
            self.timers.register_event_time_timer(time)
            self.waiting[key] = row

    def on_timer(self, timestamp: int, key: Any) -> None:
        row = self.waiting.pop(key, None)
        if row is not None:
            self.output.collect((*row, INSERT), None)
        self.emitted[key] = True
