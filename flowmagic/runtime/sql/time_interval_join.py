"""Flink's interval joins (``TimeIntervalJoin``): on event time (``RowTimeIntervalJoin``) and
on processing time (``ProcTimeIntervalJoin``).

A left row at time ``l`` may join right rows at times ``r`` with ``lower <= l - r <= upper``
(the bounds the planner derived; the condition itself, time predicates included, decides).
Each side's rows wait per key and time in ``IntervalJoinLeftCache`` / ``IntervalJoinRightCache``
while rows of the other side may still come, as the watermark says: a row is kept only if the
other side's operator time (the watermark) has not passed its window's upper bound, and
cleanup timers (``IntervalJoinLeftTimerState`` / ``IntervalJoinRightTimerState``) drop expired
rows, emitting an outer side's rows that never joined NULL-padded. The watermark goes on
delayed by the larger relative bound (rows may still be emitted that far behind it).

On processing time a row's time is when it arrives and the operator time is the task's clock
(a continuous job's epoch time): the same caches, with processing-time cleanup timers, which
fire as the clock passes them (not at the end of a bounded input, as in Flink), and the
watermark passes undelayed.
"""

from __future__ import annotations

from typing import Any

from flowmagic.errors import JobError
from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime_ops import IntervalJoinSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.records import MAX_WATERMARK
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.keys import RowKey
from flowmagic.runtime.sql.operator import INSERT, compile_code
from flowmagic.runtime.sql.timed_operator import TimedSqlOperator

__all__ = ["IntervalJoin"]

_LEFT, _RIGHT = 1, 2
LEFT_CACHE, RIGHT_CACHE = "IntervalJoinLeftCache", "IntervalJoinRightCache"
LEFT_TIMER, RIGHT_TIMER = "IntervalJoinLeftTimerState", "IntervalJoinRightTimerState"


@register(OperatorKind.SQL_INTERVAL_JOIN)
class IntervalJoin(TimedSqlOperator):
    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        if not isinstance(spec, IntervalJoinSpec):
            raise JobError(f"{name}: not an interval join's spec")
        self.rowtime = spec.rowtime
        self.now = task.clock.now
        self.condition = compile_code(spec.condition, "condition", task)
        self.key_of = {side: RowKey(spec.key_fields[side - 1], spec.key_types[side - 1]) for side in (_LEFT, _RIGHT)}
        self.left_outer = spec.join_type in ("left", "full")
        self.right_outer = spec.join_type in ("right", "full")
        self.left_nulls, self.right_nulls = (None,) * spec.widths[0], (None,) * spec.widths[1]
        # Flink's relative sizes: how far before (after) a left row right rows may be.
        self.left_relative = -spec.lower
        self.right_relative = spec.upper
        self.min_cleanup_interval = (self.left_relative + self.right_relative) // 2
        self.left_time, self.right_time = spec.left_time, spec.right_time
        self.left_expiration = self.right_expiration = 0
        backend = self.keyed_state
        for state_name in (LEFT_CACHE, RIGHT_CACHE):
            backend.declare(state_name, "MAP", "RowData")
        for state_name in (LEFT_TIMER, RIGHT_TIMER):
            backend.declare(state_name, "VALUE", "Long")
        self.left_cache: dict[Any, dict[int, list[list[Any]]]] = backend.table(f"map:{LEFT_CACHE}")
        self.right_cache: dict[Any, dict[int, list[list[Any]]]] = backend.table(f"map:{RIGHT_CACHE}")
        self.left_timer: dict[Any, int] = backend.table(f"value:{LEFT_TIMER}")
        self.right_timer: dict[Any, int] = backend.table(f"value:{RIGHT_TIMER}")

    def _operator_time(self) -> int:
        if not self.rowtime:
            return self.now()
        return self.watermark if self.watermark > 0 else 0

    @staticmethod
    def _expiration(operator_time: int, relative: int) -> int:
        return operator_time - relative - 1

    def emit_watermark(self, watermark: int) -> None:
        if not self.rowtime:
            self.output.emit_watermark(watermark)
            return
        delay = max(self.left_relative, self.right_relative)
        self.output.emit_watermark(watermark if watermark == MAX_WATERMARK else watermark - delay)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            key = self.key_of[side](value)
            self.keyed_state.current_key = key
            row = tuple(value[:-1])
            if side == _LEFT:
                self._left(key, row)
            else:
                self._right(key, row)
        except Exception as error:
            raise self.fail(error, value) from error

    def _emit(self, left: tuple[Any, ...], right: tuple[Any, ...]) -> bool:
        joined = (*left, *right, INSERT)
        if self.condition(joined) is True:
            self.output.collect(joined, None)
            return True
        return False

    def _left(self, key: Any, row: tuple[Any, ...]) -> None:
        time = row[self.left_time] if self.rowtime else self.now()
        if time is None:
            return
        operator_time = self._operator_time()
        lower, upper = time - self.right_relative, time + self.left_relative
        emitted = False
        if self.right_expiration < upper:
            self.right_expiration = self._expiration(operator_time, self.right_relative)
            cache = self.right_cache.get(key, {})
            for right_time in list(cache):
                entries = cache[right_time]
                if lower <= right_time <= upper:
                    for entry in entries:
                        if self._emit(row, entry[0]):
                            emitted = True
                            entry[1] = True
                if right_time <= self.right_expiration:
                    if self.right_outer:
                        for entry in entries:
                            if not entry[1]:
                                self.output.collect((*self.left_nulls, *entry[0], INSERT), None)
                    del cache[right_time]
            if not cache:
                self.right_cache.pop(key, None)
        if operator_time < upper:
            self.left_cache.setdefault(key, {}).setdefault(time, []).append([row, emitted])
            if key not in self.right_timer:
                self._register_cleanup(key, time, left_row=True)
        elif not emitted and self.left_outer:
            self.output.collect((*row, *self.right_nulls, INSERT), None)

    def _right(self, key: Any, row: tuple[Any, ...]) -> None:
        time = row[self.right_time] if self.rowtime else self.now()
        if time is None:
            return
        operator_time = self._operator_time()
        lower, upper = time - self.left_relative, time + self.right_relative
        emitted = False
        if self.left_expiration < upper:
            self.left_expiration = self._expiration(operator_time, self.left_relative)
            cache = self.left_cache.get(key, {})
            for left_time in list(cache):
                entries = cache[left_time]
                if lower <= left_time <= upper:
                    for entry in entries:
                        if self._emit(entry[0], row):
                            emitted = True
                            entry[1] = True
                if left_time <= self.left_expiration:
                    if self.left_outer:
                        for entry in entries:
                            if not entry[1]:
                                self.output.collect((*entry[0], *self.right_nulls, INSERT), None)
                    del cache[left_time]
            if not cache:
                self.left_cache.pop(key, None)
        if operator_time < upper:
            self.right_cache.setdefault(key, {}).setdefault(time, []).append([row, emitted])
            if key not in self.left_timer:
                self._register_cleanup(key, time, left_row=False)
        elif not emitted and self.right_outer:
            self.output.collect((*self.left_nulls, *row, INSERT), None)

    def _register_cleanup(self, key: Any, time: int, left_row: bool) -> None:
        # A left row's cleanup is registered in the right timer state and removes left rows.
        relative = self.left_relative if left_row else self.right_relative
        cleanup = time + relative + self.min_cleanup_interval + 1
        if self.rowtime:
            self.timers.register_event_time_timer(cleanup)
        else:
            self.timers.register_processing_time_timer(cleanup)
        (self.right_timer if left_row else self.left_timer)[key] = cleanup

    def advance_processing_time(self, now: int) -> None:
        backend = self.keyed_state
        for timestamp, key in self.timers.due_processing_timers(now):
            backend.current_key = key
            try:
                self.on_timer(timestamp, key)
            except Exception as error:
                raise self.fail(error, f"timer {timestamp} of key {key!r}") from error

    def next_processing_timer(self) -> int | None:
        return self.timers.next_processing_timer()

    def on_timer(self, timestamp: int, key: Any) -> None:
        operator_time = self._operator_time()
        if self.left_timer.get(key) == timestamp:
            self.right_expiration = self._expiration(operator_time, self.right_relative)
            self._remove_expired(key, self.right_expiration, left=False)
        if self.right_timer.get(key) == timestamp:
            self.left_expiration = self._expiration(operator_time, self.left_relative)
            self._remove_expired(key, self.left_expiration, left=True)

    def _remove_expired(self, key: Any, expiration: int, left: bool) -> None:
        caches = self.left_cache if left else self.right_cache
        timer_state = self.right_timer if left else self.left_timer
        cache = caches.get(key, {})
        earliest = -1
        for time in list(cache):
            if time <= expiration:
                for row, emitted in cache[time]:
                    if emitted:
                        continue
                    if left and self.left_outer:
                        self.output.collect((*row, *self.right_nulls, INSERT), None)
                    elif not left and self.right_outer:
                        self.output.collect((*self.left_nulls, *row, INSERT), None)
                del cache[time]
            elif time < earliest or earliest < 0:
                earliest = time
        if earliest > 0:
            self._register_cleanup(key, earliest, left_row=left)
        else:
            timer_state.pop(key, None)
            caches.pop(key, None)
