"""Flink's window aggregates over window TVFs: LocalWindowAggregate, GlobalWindowAggregate and
the one-phase WindowAggregate (session windows, and slicing ones when not split).

A window fires once, when the watermark passes ``window_end - 1`` (a timer at that time), and
emits one ``+I`` row per key: the keys, the aggregates, then ``window_start``, ``window_end``
and ``window_time`` (``window_end - 1``) as the query asks. TUMBLE, HOP and CUMULATE windows
keep accumulators per slice (:mod:`flowmagic.runtime.sql.windows`); a window merges its
slices. The local phase (``LocalSlicingWindowAggOperator``) keeps a subtask's accumulators per
key and slice and hands them on when the watermark may fire a window it holds (and before a
checkpoint); the global phase merges them into the keyed state ``window-aggs``. A row whose
slice belongs only to windows that fired is late and dropped; one whose slice has a window
still to fire is kept for it. Session windows grow and merge as rows arrive; a row whose
session has fired already is dropped.
"""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime_ops import WindowAggregateSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.records import MAX_WATERMARK, MIN_WATERMARK
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.aggregate_functions import AggregateFunction, aggregate_function
from flowmagic.runtime.sql.keys import RowKey
from flowmagic.runtime.sql.operator import INSERT, SqlOperator
from flowmagic.runtime.sql.timed_operator import TimedSqlOperator
from flowmagic.runtime.sql.windows import ShiftTimeZone, SliceAssigner, merge_session

__all__ = ["GlobalWindowAggregate", "LocalWindowAggregate", "WindowAggregate"]

#: WindowAggOperator's state of accumulators per key and window (or slice).
WINDOW_STATE = "window-aggs"


class _Aggregates:
    """The aggregate calls of a window aggregate: accumulators made, fed and merged."""

    def __init__(self, spec: WindowAggregateSpec):
        self.functions: list[AggregateFunction] = [aggregate_function(c, False) for c in spec.calls]
        self.calls = [
            (f, c.args[0] if c.args else None, c.filter) for f, c in zip(self.functions, spec.calls, strict=True)
        ]

    def create(self) -> list[Any]:
        return [f.create() for f in self.functions]

    def accumulate(self, accumulators: list[Any], row: Any) -> None:
        for index, (function, arg, condition) in enumerate(self.calls):
            if condition is not None and row[condition] is not True:
                continue
            if arg is None:
                argument = None
            else:
                argument = row[arg]
                if argument is None:
                    continue
            accumulators[index] = function.add(accumulators[index], argument)

    def merge(self, accumulators: list[Any], others: Any) -> None:
        for index, function in enumerate(self.functions):
            accumulators[index] = function.merge(accumulators[index], others[index])

    def values(self, accumulators: list[Any]) -> tuple[Any, ...]:
        return tuple(f.value(a) for f, a in zip(self.functions, accumulators, strict=True))


@register(OperatorKind.SQL_LOCAL_WINDOW_AGGREGATE)
class LocalWindowAggregate(SqlOperator):
    """The local phase: accumulators per key and slice, handed on as ``(keys..., accumulators...,
    slice_end)`` rows when the watermark may fire one of their windows."""

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, WindowAggregateSpec)
        self.aggregates = _Aggregates(spec)
        self.assigner = SliceAssigner(spec.window)
        self.time_field = spec.window.time_field
        self.grouping = spec.grouping
        self.buffer: dict[tuple[tuple[Any, ...], int], list[Any]] = {}
        self.min_slice_end = MAX_WATERMARK
        self.watermark = MIN_WATERMARK
        self.next_trigger = MIN_WATERMARK

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.process_batch([value])

    def process_batch(self, values: list[Any]) -> None:
        buffer, aggregates, assigner = self.buffer, self.aggregates, self.assigner
        grouping, time_field = self.grouping, self.time_field
        row: Any = None
        try:
            for row in values:
                time = row[time_field]
                if time is None:
                    continue
                slice_end = assigner.slice_end(time)
                entry = (tuple([row[g] for g in grouping]), slice_end)
                accumulators = buffer.get(entry)
                if accumulators is None:
                    accumulators = buffer[entry] = aggregates.create()
                    if slice_end < self.min_slice_end:
                        self.min_slice_end = slice_end
                aggregates.accumulate(accumulators, row)
        except Exception as error:
            raise self.fail(error, row) from error

    def flush(self) -> None:
        if not self.buffer:
            return
        rows = [(*keys, *accumulators, slice_end, INSERT) for (keys, slice_end), accumulators in self.buffer.items()]
        self.buffer = {}
        self.min_slice_end = MAX_WATERMARK
        self.output.collect_batch(rows)

    def process_watermark(self, watermark: int) -> None:
        if watermark > self.watermark:
            self.watermark = watermark
            if watermark >= self.next_trigger:
                if self.assigner.fired(self.min_slice_end, watermark):
                    self.flush()
                self.next_trigger = self.assigner.next_trigger(watermark)
        self.output.emit_watermark(watermark)

    def prepare_snapshot(self, checkpoint: bool) -> None:
        self.flush()

    def end_input(self) -> None:
        self.flush()


class _KeyedWindowAggregate(TimedSqlOperator):
    """What the global phase and the one-phase aggregate share: the key, the state, the output."""

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, WindowAggregateSpec)
        self.aggregates = _Aggregates(spec)
        self.key_of = RowKey(spec.key_fields, spec.key_types)
        self.properties = spec.properties
        self.shift = ShiftTimeZone(spec.window.zone)
        backend = self.keyed_state
        backend.declare(WINDOW_STATE, "VALUE", "RowData")
        self.state: dict[Any, dict[Any, list[Any]]] = backend.table(f"value:{WINDOW_STATE}")
        #: Flink's metric of the rows dropped for being late.
        self.late_dropped = self.runtime_context.get_metrics_group().counter("numLateRecordsDropped")

    def result(self, key: Any, accumulators: list[Any], start: int, end: int) -> tuple[Any, ...]:
        window = {"window_start": start, "window_end": end, "window_time": self.shift.to_epoch(end - 1)}
        return (*key.fields, *self.aggregates.values(accumulators), *(window[p] for p in self.properties), INSERT)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.process_batch([value])

    def process_batch(self, values: list[Any]) -> None:
        backend = self.keyed_state
        key_of = self.key_of
        row: Any = None
        try:
            for row in values:
                key = key_of(row)
                backend.current_key = key
                self.add(key, row)
        except Exception as error:
            raise self.fail(error, row) from error

    def add(self, key: Any, row: Any) -> None:
        raise NotImplementedError


class _SlicingWindowAggregate(_KeyedWindowAggregate):
    """A TUMBLE, HOP or CUMULATE window aggregate over slices (Flink's slicing processors).

    As Flink's, rows wait in a buffer (``WindowBuffer``) until the watermark reaches the next
    trigger (:meth:`SliceAssigner.next_trigger`), a checkpoint or the end of input; merged into
    the state then, a slice gets a timer only if the timers' watermark has not passed it
    (Flink's combiners). With a shift time zone without daylight saving the trigger is aligned
    in UTC, not in the zone, so slices can come after their window's time: Flink keeps them
    without firing the window, and so does this."""

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.assigner = SliceAssigner(self.spec.window)
        self.buffer: list[tuple[Any, int, Any]] = []
        self.min_slice_end = MAX_WATERMARK
        self.next_trigger = MIN_WATERMARK

    def slice_and_accumulators(self, row: Any) -> tuple[int | None, Any]:
        """The row's slice end and what it adds to the slice's accumulators."""
        raise NotImplementedError

    def add(self, key: Any, row: Any) -> None:
        slice_end, accumulators = self.slice_and_accumulators(row)
        if slice_end is None:
            return
        watermark, assigner = self.watermark, self.assigner
        if assigner.fired(slice_end, watermark):
            if assigner.fired(assigner.last_window_end(slice_end), watermark):
                self.late_dropped.inc()
                return
            # Late, but a window holding its slice is still to fire: keep it for that one.
            timer_end = slice_end
            while assigner.fired(timer_end, watermark):
                timer_end += assigner.interval
            self.timers.register_event_time_timer(assigner.timer(timer_end))
        self.buffer.append((key, slice_end, accumulators))
        if slice_end < self.min_slice_end:
            self.min_slice_end = slice_end

    def flush(self) -> None:
        """The buffered slices into the state (the timers' watermark is the last one fired)."""
        buffer, self.buffer = self.buffer, []
        self.min_slice_end = MAX_WATERMARK
        backend, assigner, watermark = self.keyed_state, self.assigner, self.timers.current_watermark_value
        for key, slice_end, accumulators in buffer:
            backend.current_key = key
            slices = self.state.get(key)
            if slices is None:
                slices = self.state[key] = {}
            current = slices.get(slice_end)
            if current is None:
                slices[slice_end] = accumulators
            else:
                self.aggregates.merge(current, accumulators)
            if not assigner.fired(slice_end, watermark):
                self.timers.register_event_time_timer(assigner.timer(slice_end))

    def process_watermark(self, watermark: int) -> None:
        if watermark > self.watermark and watermark >= self.next_trigger:
            if self.assigner.fired(self.min_slice_end, watermark):
                self.flush()
            self.next_trigger = self.assigner.next_trigger(watermark)
        super().process_watermark(watermark)

    def prepare_snapshot(self, checkpoint: bool) -> None:
        self.flush()

    def end_input(self) -> None:
        self.flush()

    def on_timer(self, timestamp: int, key: Any) -> None:
        for window_end in self.assigner.window_ends(timestamp):
            self.fire(window_end, key)

    def fire(self, window_end: int, key: Any) -> None:
        assigner = self.assigner
        slices = self.state.get(key, {})
        merged = None
        for slice_end in assigner.slices(window_end):
            accumulators = slices.get(slice_end)
            if accumulators is not None:
                if merged is None:
                    merged = self.aggregates.create()
                self.aggregates.merge(merged, accumulators)
        if merged is not None:
            self.output.collect(self.result(key, merged, assigner.window_start(window_end), window_end), None)
        following = assigner.next_window_end(window_end, merged is None)
        if following is not None:
            self.timers.register_event_time_timer(assigner.timer(following))
        for slice_end in assigner.expired_slices(window_end):
            slices.pop(slice_end, None)
        if not slices:
            self.state.pop(key, None)


@register(OperatorKind.SQL_GLOBAL_WINDOW_AGGREGATE)
class GlobalWindowAggregate(_SlicingWindowAggregate):
    """The global phase: merges the local phase's accumulators (``keys..., accumulators...,
    slice_end``) per key and slice, fires the windows."""

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.first = len(self.spec.grouping)
        self.count = len(self.spec.calls)

    def slice_and_accumulators(self, row: Any) -> tuple[int | None, Any]:
        first = self.first
        return row[first + self.count], list(row[first : first + self.count])


class _OnePhaseSlicing(_SlicingWindowAggregate):
    def slice_and_accumulators(self, row: Any) -> tuple[int | None, Any]:
        time = row[self.spec.window.time_field]
        if time is None:
            return None, None
        accumulators = self.aggregates.create()
        self.aggregates.accumulate(accumulators, row)
        return self.assigner.slice_end(time), accumulators


class _SessionWindowAggregate(_KeyedWindowAggregate):
    """SESSION windows (Flink's unslicing processor over a merging window set): a row opens
    ``[time, time + gap)``, merged with the key's sessions it touches."""

    def add(self, key: Any, row: Any) -> None:
        spec = self.spec
        time = row[spec.window.time_field]
        if time is None:
            return
        sessions = self.state.get(key)
        if sessions is None:
            sessions = {}
        actual, merged = merge_session(list(sessions), (time, time + spec.window.gap))
        if actual[1] - 1 <= self.watermark:
            self.late_dropped.inc()
            return
        accumulators = None
        for window in merged:
            previous = sessions.pop(window)
            if accumulators is None:
                accumulators = previous
            else:
                self.aggregates.merge(accumulators, previous)
        if accumulators is None:
            accumulators = self.aggregates.create()
        self.aggregates.accumulate(accumulators, row)
        if merged != [actual]:
            # The merged sessions' timers go; the grown session's comes.
            for window in merged:
                self.timers.delete_event_time_timer(window[1] - 1)
        sessions[actual] = accumulators
        self.state[key] = sessions
        self.timers.register_event_time_timer(actual[1] - 1)

    def on_timer(self, timestamp: int, key: Any) -> None:
        sessions = self.state.get(key, {})
        for window in [w for w in sessions if w[1] - 1 == timestamp]:
            accumulators = sessions.pop(window)
            self.output.collect(self.result(key, accumulators, window[0], window[1]), None)
        if not sessions:
            self.state.pop(key, None)


@register(OperatorKind.SQL_WINDOW_AGGREGATE)
class WindowAggregate(_KeyedWindowAggregate):
    """The one-phase window aggregate: session windows, or slicing ones not split in two."""

    def __new__(cls, name: str, params: SqlOperatorParams, task: TaskInfo) -> Any:
        spec = params.runtime
        implementation = _SessionWindowAggregate if spec.window.kind == "SESSION" else _OnePhaseSlicing
        return implementation(name, params, task)
