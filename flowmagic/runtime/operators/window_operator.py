"""The window operator: assigners, triggers, evictors, lateness and window functions.

Follows Flink's ``WindowOperator`` / ``EvictingWindowOperator``: elements go into every
window their assigner gives them (sessions merge), triggers decide when a window fires
(event time: when the watermark passes ``window.max_timestamp()``), results carry the
window's max timestamp, and elements for windows already past ``max_timestamp +
allowed_lateness`` are dropped or sent to the late-data side output.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flowmagic.errors import ProgramError
from flowmagic.graph.operator_params import WindowFunctionKind, WindowParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.operators.context import (
    KeyedStateBackend,
    KeyedStateStore,
    ListState,
    MapState,
    ValueState,
    adapt,
    emit_all,
    takes_collector,
)
from flowmagic.runtime.operators.keyed_aggregation import aggregation_function
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.operators.window_assigner_trigger_evictor import (
    TimeWindow,
    assign_windows,
    clear,
    evict,
    holds_its_last_element,
    on_element,
    on_event_time,
    on_merge,
    on_processing_time,
)
from flowmagic.runtime.records import MAX_WATERMARK, MIN_WATERMARK
from flowmagic.runtime.registry import register
from flowmagic.runtime.state.timer_queue import TimerQueue
from flowmagic.vocabulary import functions
from flowmagic.vocabulary.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from flowmagic.vocabulary.windows import TriggerResult

__all__ = ["TriggerContext", "WindowOperator"]

#: Long.MAX_VALUE: a window whose cleanup would come at the end of time gets no cleanup timer.
_END_OF_TIME = (1 << 63) - 1


class TriggerContext:
    """The ``ctx`` of a trigger's methods (PyFlink's ``Trigger.TriggerContext`` and
    ``OnMergeContext``): timers and partitioned state of one key's window."""

    def __init__(self, operator: WindowOperator):
        self._operator = operator
        self.key: Any = None
        self.window: Any = None
        #: While sessions merge: the windows merged into :attr:`window`.
        self.merged: list[Any] = []

    def bind(self, key: Any, window: Any) -> TriggerContext:
        self.key, self.window, self.merged = key, window, []
        self._operator.note_window(key, window)
        self._operator.trigger_state.current_key = (key, window)
        return self

    def get_current_watermark(self) -> int:
        return self._operator.watermark

    def get_current_processing_time(self) -> int:
        return self._operator.task.clock.now()

    def register_event_time_timer(self, time: int) -> None:
        self._operator.register_timer("event", time, self.key, self.window)

    def register_processing_time_timer(self, time: int) -> None:
        self._operator.register_timer("processing", time, self.key, self.window)

    def delete_event_time_timer(self, time: int) -> None:
        self._operator.delete_timer("event", time, self.key, self.window)

    def delete_processing_time_timer(self, time: int) -> None:
        self._operator.delete_timer("processing", time, self.key, self.window)

    def get_partitioned_state(self, state_descriptor: Any) -> Any:
        """The state of ``state_descriptor`` for this key and window."""
        backend = self._operator.trigger_state
        if isinstance(state_descriptor, ValueStateDescriptor):
            return ValueState(backend, state_descriptor.name)
        if isinstance(state_descriptor, ListStateDescriptor):
            return ListState(backend, state_descriptor.name)
        if isinstance(state_descriptor, MapStateDescriptor):
            return MapState(backend, state_descriptor.name)
        raise ProgramError(f"get_partitioned_state() expects a state descriptor, got {state_descriptor!r}.")

    def merge_partitioned_state(self, state_descriptor: Any) -> None:
        """In ``on_merge``: the merged windows' list state, appended into the new window's."""
        if not isinstance(state_descriptor, ListStateDescriptor):
            raise ProgramError("merge_partitioned_state() merges list state only (ListStateDescriptor).")
        table = self._operator.trigger_state.table(state_descriptor.name)
        merged = [value for window in self.merged for value in table.pop((self.key, window), [])]
        if merged:
            table.setdefault((self.key, self.window), []).extend(merged)

    def merged_fire_times(self, state_descriptor: ValueStateDescriptor) -> int | None:
        """The earliest of the merged windows' values of ``state_descriptor`` (dropping them)."""
        table = self._operator.trigger_state.table(state_descriptor.name)
        times = [table.pop((self.key, window)) for window in self.merged if (self.key, window) in table]
        return min(times) if times else None

    def count_element(self, max_count: int) -> bool:
        """CountTrigger's count of this window: True (and back to 0) when it reaches ``max_count``."""
        counts, slot = self._operator.counts, (self.key, self.window)
        counts[slot] = counts.get(slot, 0) + 1
        if counts[slot] >= max_count:
            counts[slot] = 0
            return True
        return False


class WindowContext(functions.WindowContext):
    """The ``context`` of a ProcessWindowFunction (and ProcessAllWindowFunction)."""

    def __init__(self, operator: WindowOperator):
        self._operator = operator
        self._window: Any = None
        self._window_state = KeyedStateStore(operator.window_state_backend, operator.task.clock)
        self._global_state = KeyedStateStore(operator.keyed_state, operator.task.clock)

    def bind(self, key: Any, window: Any) -> WindowContext:
        self._window = window
        self._operator.note_window(key, window)
        self._operator.keyed_state.current_key = key
        self._operator.window_state_backend.current_key = (key, window)
        return self

    def window(self) -> Any:
        return self._window

    def current_watermark(self) -> int:
        return self._operator.watermark

    def current_processing_time(self) -> int:
        return self._operator.task.clock.now()

    def window_state(self) -> KeyedStateStore:
        """State of the current key and window (dropped by the function's ``clear(context)``)."""
        return self._window_state

    def global_state(self) -> KeyedStateStore:
        """State of the current key, across its windows."""
        return self._global_state


class _ListCollector:
    """The ``out`` of a collector-style window function: its records, emitted after it returns."""

    __slots__ = ("records",)

    def __init__(self) -> None:
        self.records: list[Any] = []

    def collect(self, value: Any) -> None:
        self.records.append(value)


#: The window functions that fold each element into the window's state as it comes.
_INCREMENTAL = frozenset({WindowFunctionKind.REDUCE, WindowFunctionKind.AGGREGATE, WindowFunctionKind.AGGREGATION})
#: The window functions that get the window's elements, all at once, when it fires.
_WHOLE_WINDOW = frozenset({WindowFunctionKind.PROCESS, WindowFunctionKind.APPLY})


@register(OperatorKind.WINDOW)
class WindowOperator(Operator):
    """Keyed (or, for ``window_all``, keyed by a constant) windows."""

    keyed = True
    #: Every change of a key's windows happens while the key is current: its element, or
    #: one of its timers (see :meth:`process` and :meth:`_on_timer`).
    tracks_changes = True

    def __init__(self, name: str, params: WindowParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.key_selector = params.key_selector
        self.assigner = params.assigner
        self.trigger = params.trigger
        self.evictor = params.evictor
        self.lateness = params.allowed_lateness
        self.late_tag = params.late_tag
        self.all_windows = params.all_windows
        self.kind = params.function_kind
        self.function: Any = params.function
        self.window_function: Any = params.window_function
        self.event_time = self.assigner.is_event_time
        #: PyFlink's Python window operator stamps a window's results with the time of what
        #: fired it (the element's timestamp, or the timer's time); Java's with the window's
        #: max timestamp.
        self.stamps_firing_time = params.stamps_firing_time
        self.watermark = MIN_WATERMARK
        # (key, window) -> contents: a list of (value, timestamp) or an accumulator.
        self.contents: dict[tuple[Any, Any], Any] = {}
        self.counts: dict[tuple[Any, Any], int] = {}
        # The trigger's partitioned state, keyed by (key, window).
        self.trigger_state = KeyedStateBackend()
        self.trigger_context = TriggerContext(self)
        # The window functions' window_state(), keyed by (key, window).
        self.window_state_backend = KeyedStateBackend()
        self.sessions: dict[Any, list[TimeWindow]] = {}
        # Flink's timer service of the operator: one timer per (time, key, window), the
        # window's trigger timers and cleanup timer alike, fired in Flink's heap order.
        self.event_timers = TimerQueue()
        self.processing_timers = TimerQueue()
        # The timers still pending, by (key, window): (kind, time).
        self.slot_timers: dict[tuple[Any, Any], set[tuple[str, int]]] = {}
        # Per key, the windows that may hold some of its state (contents, counts, trigger or
        # window state, timers): a snapshot of a few keys reads theirs without going through
        # every key's. Windows found empty are dropped from it.
        self.windows_of: dict[Any, dict[Any, None]] = {}
        self.context = WindowContext(self)
        # The element's key's state, for assigners that keep some (PyFlink's count windows).
        self.assigner_state = KeyedStateStore(self.keyed_state, task.clock)
        self.incremental = self.evictor is None and self.kind in _INCREMENTAL
        if self.kind is WindowFunctionKind.AGGREGATION:
            assert params.aggregation is not None and params.position is not None, "an aggregation names its field"
            self.reduce = aggregation_function(params.aggregation, params.position)
        elif self.kind is WindowFunctionKind.REDUCE:
            self.reduce = adapt(self.function, "reduce")
        self.late_records_dropped = 0
        self.user_functions = tuple(f for f in (self.function, self.window_function) if f is not None)
        # Which window functions take an ``out`` (Java's style) after their arguments
        # (window_all's have no key), by function: decided once, not per firing.
        arguments = 2 if self.all_windows else 3
        window_functions = [self.window_function, self.function if self.kind in _WHOLE_WINDOW else None]
        #: The functions that get a window and its context (not reduce or aggregate functions).
        self.window_functions = [f for f in window_functions if f is not None]
        self.collector_style = {
            id(f): takes_collector(adapt(f, "apply" if self._is_apply(f) else "process"), arguments)
            for f in window_functions
            if f is not None
        }

    # -- elements ---------------------------------------------------------------------------

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            key = self.key_selector(value)
        except Exception as error:
            raise self.fail(error, value) from error
        # As Flink's keyed operators, the element's key is current while it is processed:
        # this records it among the keys whose state changed.
        self.keyed_state.current_key = key
        if self.event_time:
            element_time = timestamp if timestamp is not None else MIN_WATERMARK
        else:
            element_time = self.task.clock.now()
        try:
            windows = assign_windows(self.assigner, value, element_time, self.assigner_state)
        except Exception as error:
            raise self.fail(error, value) from error
        if self.assigner.is_merging:
            windows = [self._merge_session(key, windows[0])]
        skipped = True
        for window in windows:
            if self._is_late(window):
                if self.assigner.is_merging:
                    # Flink retires a late merged window at once: no later element can merge
                    # with a session that was never open.
                    self._retire_session(key, window)
                continue
            skipped = False
            self._add(key, window, value, timestamp)
            # As Flink's: the trigger gets the record's timestamp (Long.MIN_VALUE if it has
            # none), also in processing-time windows.
            record_time = timestamp if timestamp is not None else MIN_WATERMARK
            result = self._trigger(on_element, key, window, value, record_time)
            self._act(result, key, window, timestamp)
            self._register_cleanup(key, window)
            if (key, window) not in self.slot_timers and holds_its_last_element(
                self.assigner, window, self.assigner_state
            ):
                # Nothing can reach this window again (no element, no timer): PyFlink keeps
                # its state forever; dropping it changes no output.
                self._drop(key, window)
        # Only an element that is late itself counts as late data (an element in no window,
        # between sliding windows, is simply dropped).
        if skipped and self.event_time and element_time + self.lateness <= self.watermark:
            if self.late_tag is not None:
                self.output.side(self.late_tag, value, timestamp)
            else:
                self.late_records_dropped += 1
        if not self.event_time:
            self.advance_processing_time(self.task.clock.now())

    def _is_late(self, window: Any) -> bool:
        return self.event_time and window.max_timestamp() + self.lateness <= self.watermark

    def _add(self, key: Any, window: Any, value: Any, timestamp: int | None) -> None:
        slot = (key, window)
        self.note_window(key, window)
        try:
            if not self.incremental:
                self.contents.setdefault(slot, []).append((value, timestamp))
            elif self.kind is WindowFunctionKind.AGGREGATE:
                accumulator = self.contents[slot] if slot in self.contents else self.function.create_accumulator()
                self.contents[slot] = self.function.add(value, accumulator)
            elif slot in self.contents:
                self.contents[slot] = self.reduce(self.contents[slot], value)
            else:
                self.contents[slot] = value
        except Exception as error:
            raise self.fail(error, value) from error

    def _merge_session(self, key: Any, window: TimeWindow) -> TimeWindow:
        merged = window
        kept = []
        absorbed = []
        for existing in self.sessions.get(key, []):
            if existing.intersects(merged):
                merged = merged.cover(existing)
                absorbed.append(existing)
            else:
                kept.append(existing)
        # As Flink's MergingWindowSet: no merge when the new window only falls into an
        # existing one. Otherwise the trigger merges first, then each merged window's trigger
        # state and cleanup timer go (in this order: their timers' heap moves follow it).
        if absorbed and absorbed != [merged]:
            try:
                context = self.trigger_context.bind(key, merged)
                context.merged = absorbed
                on_merge(self.trigger, context, merged)
                for old in absorbed:
                    clear(self.trigger, self.trigger_context.bind(key, old), old)
                    self._delete_cleanup(key, old)
            except Exception as error:
                raise self.fail(error, f"window {merged} of key {key!r}") from error
        for old in absorbed:
            self._merge_contents(key, old, merged)
        kept.append(merged)
        self.sessions[key] = kept
        return merged

    def _retire_session(self, key: Any, window: TimeWindow) -> None:
        self.sessions[key] = [session for session in self.sessions[key] if session != window]

    def _merge_contents(self, key: Any, old: TimeWindow, merged: TimeWindow) -> None:
        if old == merged:
            return
        source, target = (key, old), (key, merged)
        self.note_window(key, merged)
        self.counts[target] = self.counts.get(target, 0) + self.counts.pop(source, 0)
        if source not in self.contents:
            return
        moved = self.contents.pop(source)
        if target not in self.contents:
            self.contents[target] = moved
        elif not self.incremental:
            self.contents[target] = self.contents[target] + moved
        elif self.kind is WindowFunctionKind.AGGREGATE:
            self.contents[target] = self.function.merge(self.contents[target], moved)
        else:
            self.contents[target] = self.reduce(self.contents[target], moved)

    # -- triggers ---------------------------------------------------------------------------

    def note_window(self, key: Any, window: Any) -> None:
        """``window`` of ``key`` may hold state from now on (see :attr:`windows_of`)."""
        windows = self.windows_of.get(key)
        if windows is None:
            self.windows_of[key] = {window: None}
        elif window not in windows:
            windows[window] = None

    def _queue(self, kind: str) -> TimerQueue:
        return self.event_timers if kind == "event" else self.processing_timers

    def register_timer(self, kind: str, timestamp: int, key: Any, window: Any) -> None:
        """A timer of ``kind`` (event or processing) for ``window`` of ``key``."""
        if self._queue(kind).add(timestamp, key, window):
            slot = (key, window)
            pending = self.slot_timers.get(slot)
            if pending is None:
                pending = self.slot_timers[slot] = set()
                self.note_window(key, window)
            pending.add((kind, timestamp))

    def delete_timer(self, kind: str, timestamp: int, key: Any, window: Any) -> None:
        """Drop the pending timer of ``kind`` at ``timestamp`` for ``window`` of ``key``, if any."""
        if self._queue(kind).remove(timestamp, key, window):
            self._forget_timer(kind, timestamp, key, window)

    def _forget_timer(self, kind: str, timestamp: int, key: Any, window: Any) -> None:
        slot = (key, window)
        pending = self.slot_timers[slot]
        pending.discard((kind, timestamp))
        if not pending:
            del self.slot_timers[slot]

    def _cleanup_time(self, window: Any) -> int | None:
        # Flink's WindowOperator.cleanupTime: the end of allowed lateness (event time) or the
        # window's end; None at the end of time (GlobalWindow, CountWindow), which gets none.
        cleanup = window.max_timestamp() + (self.lateness if self.event_time else 0)
        return None if cleanup >= _END_OF_TIME else cleanup

    def _register_cleanup(self, key: Any, window: Any) -> None:
        cleanup = self._cleanup_time(window)
        if cleanup is not None:
            self.register_timer("event" if self.event_time else "processing", cleanup, key, window)

    def _delete_cleanup(self, key: Any, window: Any) -> None:
        cleanup = self._cleanup_time(window)
        if cleanup is not None:
            self.delete_timer("event" if self.event_time else "processing", cleanup, key, window)

    def _trigger(self, method: Any, key: Any, window: Any, *arguments: Any) -> TriggerResult:
        """Ask the trigger (one of window_behaviour's trigger methods) about ``window`` of ``key``."""
        try:
            return method(self.trigger, self.trigger_context.bind(key, window), *arguments, window)
        except Exception as error:
            raise self.fail(error, f"window {window} of key {key!r}") from error

    def _act(self, result: TriggerResult, key: Any, window: Any, fired_at: int | None) -> None:
        """Do what the trigger said, ``fired_at`` the time of the element or timer that fired."""
        if result.is_fire():
            self._fire(key, window, fired_at if self.stamps_firing_time else window.max_timestamp())
        if result.is_purge():
            self.contents.pop((key, window), None)

    def _fire(self, key: Any, window: Any, timestamp: int | None) -> None:
        slot = (key, window)
        if slot not in self.contents:
            return
        contents = self.contents[slot]
        if self.evictor is None:
            self._emit(key, window, contents, timestamp)
            return
        # Flink's EvictingWindowOperator: the window keeps what the evictor left.
        if not self.evictor.do_evict_after:
            contents = self.contents[slot] = evict(self.evictor, contents)
        self._emit(key, window, contents, timestamp)
        if self.evictor.do_evict_after:
            self.contents[slot] = evict(self.evictor, contents)

    def _emit(self, key: Any, window: Any, contents: Any, timestamp: int | None) -> None:
        collect = self.output.collect
        self.context.bind(key, window)
        try:
            if self.incremental:
                result = self.function.get_result(contents) if self.kind is WindowFunctionKind.AGGREGATE else contents
                if self.window_function is None:
                    collect(result, timestamp)
                    return
                results = self._call_window_function(self.window_function, key, window, [result])
            else:
                values = [value for value, _ts in contents]
                if self.kind in (WindowFunctionKind.REDUCE, WindowFunctionKind.AGGREGATION):
                    accumulated = values[0]
                    for value in values[1:]:
                        accumulated = self.reduce(accumulated, value)
                    values = [accumulated]
                elif self.kind is WindowFunctionKind.AGGREGATE:
                    accumulator = self.function.create_accumulator()
                    for value in values:
                        accumulator = self.function.add(value, accumulator)
                    values = [self.function.get_result(accumulator)]
                if self.kind in _WHOLE_WINDOW:
                    results = self._call_window_function(self.function, key, window, values)
                elif self.window_function is not None:
                    results = self._call_window_function(self.window_function, key, window, values)
                else:
                    results = values
            emit_all(results, lambda value: collect(value, timestamp))
        except Exception as error:
            raise self.fail(error, f"window {window} of key {key!r}") from error

    def _call_window_function(self, function: Any, key: Any, window: Any, elements: list[Any]) -> Any:
        # apply() takes a WindowFunction: apply(key, window, elements); a ProcessWindowFunction
        # (or a plain function given to process() or as a window function) gets the context:
        # process(key, context, elements). window_all drops the key.
        first = window if self._is_apply(function) else self.context
        arguments = [first, elements] if self.all_windows else [key, first, elements]
        call = adapt(function, "apply" if self._is_apply(function) else "process")
        if not self.collector_style[id(function)]:
            return call(*arguments)
        out = _ListCollector()
        call(*arguments, out)
        return out.records

    def _is_apply(self, function: Any) -> bool:
        if isinstance(function, type):
            return False
        if hasattr(function, "process") and callable(function.process):
            return False
        return hasattr(function, "apply") or (self.kind is WindowFunctionKind.APPLY and function is self.function)

    # -- time -------------------------------------------------------------------------------

    def _on_timer(self, kind: str, timestamp: int, key: Any, window: Any) -> None:
        # Flink's WindowOperator.onEventTime/onProcessingTime: the trigger decides, then the
        # window goes if this is its cleanup time. A timer of a session window merged away
        # since does nothing.
        self.keyed_state.current_key = key
        if self.assigner.is_merging and window not in self.sessions.get(key, ()):
            return
        method = on_event_time if kind == "event" else on_processing_time
        self._act(self._trigger(method, key, window, timestamp), key, window, timestamp)
        if (kind == "event") == self.event_time and timestamp == self._cleanup_time(window):
            self._clear_all(key, window)

    def _clear_all(self, key: Any, window: Any) -> None:
        slot = (key, window)
        self.contents.pop(slot, None)
        self.counts.pop(slot, None)
        try:
            clear(self.trigger, self.trigger_context.bind(key, window), window)
            self._clear_window_functions(key, window)
        except Exception as error:
            raise self.fail(error, f"window {window} of key {key!r}") from error
        if self.assigner.is_merging and key in self.sessions:
            self.sessions[key] = [w for w in self.sessions[key] if w != window]
        if not self._holds(slot):
            self._forget(key, window)

    def _clear_window_functions(self, key: Any, window: Any) -> None:
        # PyFlink's ProcessWindowFunction.clear(context): the window is gone, its
        # window_state() with it.
        for function in self.window_functions:
            clearer = getattr(function, "clear", None)
            if callable(clearer) and not isinstance(function, type):
                clearer(self.context.bind(key, window))

    def _run_timers(self, kind: str, limit: int) -> None:
        for timer in self._queue(kind).pop_due(limit):
            self._forget_timer(kind, timer.timestamp, timer.key, timer.namespace)
            self._on_timer(kind, timer.timestamp, timer.key, timer.namespace)

    def advance_processing_time(self, now: int) -> None:
        self._run_timers("processing", now)

    def next_processing_timer(self) -> int | None:
        head = self.processing_timers.peek()
        return None if head is None else head.timestamp

    def process_watermark(self, watermark: int) -> None:
        self.watermark = watermark
        self._run_timers("event", watermark)
        self.output.emit_watermark(watermark)

    def finish_key(self) -> None:
        # BATCH: the key's windows fire as if its input were at the end of time; the next key
        # starts again without a watermark, so none of its elements is late.
        self.watermark = MAX_WATERMARK
        self._run_timers("event", MAX_WATERMARK)
        self.advance_processing_time(MAX_WATERMARK)
        self.watermark = MIN_WATERMARK

    def end_input(self) -> None:
        # A bounded job's clock jumps to the end: processing-time windows fire now.
        self.advance_processing_time(MAX_WATERMARK)

    # -- checkpoints --------------------------------------------------------------------------

    def state_keys(self) -> int:
        # A key's windows hold its state (its global state is in the keyed state backend).
        return max(len(self.windows_of), super().state_keys())

    def pending_timers(self) -> int:
        return len(self.event_timers) + len(self.processing_timers)

    def snapshot_keyed(self, keys: Iterable[Any] | None = None) -> dict[Any, dict[str, Any]]:
        entries = super().snapshot_keyed(keys)
        timers: list[tuple[int, str, Any, Any]] = []
        if keys is None:
            self._snapshot_every_window(entries, timers)
        else:
            self._snapshot_windows_of(keys, entries, timers)
        # In time order (stable: by window, as gathered), so that a restore registers them alike.
        timers.sort(key=lambda timer: timer[0])
        for timestamp, kind, key, window in timers:
            entries.setdefault(key, {}).setdefault("@timers", []).append((kind, timestamp, window))
        return entries

    def _snapshot_every_window(
        self, entries: dict[Any, dict[str, Any]], timers: list[tuple[int, str, Any, Any]]
    ) -> None:
        # Table by table: looking each window up in every table would hash it each time,
        # which made a whole snapshot markedly slower.
        tables = [
            ("@contents", self.contents),
            ("@counts", self.counts),
            ("@trigger", self.trigger_state.snapshot()),
            ("@window_state", self.window_state_backend.snapshot()),
        ]
        for name, table in tables:
            for (key, window), held in table.items():
                entries.setdefault(key, {}).setdefault(name, {})[window] = held
        for key, sessions in self.sessions.items():
            if sessions:
                entries.setdefault(key, {})["@sessions"] = list(sessions)
        for (key, window), pending in self.slot_timers.items():
            for kind, timestamp in sorted(pending):
                timers.append((timestamp, kind, key, window))

    def _snapshot_windows_of(
        self,
        keys: Iterable[Any],
        entries: dict[Any, dict[str, Any]],
        timers: list[tuple[int, str, Any, Any]],
    ) -> None:
        # Through the windows each key may have (windows_of), forgetting those found empty.
        slots: list[tuple[Any, Any]] = []
        for key in keys:
            slots.extend((key, window) for window in self.windows_of.get(key, ()))
            sessions = self.sessions.get(key)
            if sessions:
                entries.setdefault(key, {})["@sessions"] = list(sessions)
            elif sessions is not None:
                del self.sessions[key]
        tables = [
            ("@contents", self.contents),
            ("@counts", self.counts),
            ("@trigger", self.trigger_state.snapshot(slots)),
            ("@window_state", self.window_state_backend.snapshot(slots)),
        ]
        for slot in slots:
            key, window = slot
            held = False
            for name, table in tables:
                if slot in table:
                    entries.setdefault(key, {}).setdefault(name, {})[window] = table[slot]
                    held = True
            pending = self.slot_timers.get(slot)
            if pending:
                for kind, timestamp in sorted(pending):
                    timers.append((timestamp, kind, key, window))
            elif not held:
                self._forget(key, window)

    def _holds(self, slot: tuple[Any, Any]) -> bool:
        return (
            slot in self.contents
            or slot in self.counts
            or slot in self.slot_timers
            or self.trigger_state.holds(slot)
            or self.window_state_backend.holds(slot)
        )

    def _drop(self, key: Any, window: Any) -> None:
        slot = (key, window)
        self.contents.pop(slot, None)
        self.counts.pop(slot, None)
        self.trigger_state.drop(slot)
        self.window_state_backend.drop(slot)
        self._forget(key, window)

    def _forget(self, key: Any, window: Any) -> None:
        windows = self.windows_of.get(key)
        if windows is not None:
            windows.pop(window, None)
            if not windows:
                del self.windows_of[key]

    def restore_keyed(self, entries: dict[Any, dict[str, Any]]) -> None:
        super().restore_keyed(entries)
        for key, states in entries.items():
            for window, contents in states.get("@contents", {}).items():
                self.note_window(key, window)
                self.contents[(key, window)] = contents
            for window, count in states.get("@counts", {}).items():
                self.note_window(key, window)
                self.counts[(key, window)] = count
            if "@sessions" in states:
                self.sessions[key] = list(states["@sessions"])
            for name, backend in (("@trigger", self.trigger_state), ("@window_state", self.window_state_backend)):
                held = states.get(name, {})
                for window in held:
                    self.note_window(key, window)
                backend.restore({(key, window): values for window, values in held.items()})
            for kind, timestamp, window in states.get("@timers", []):
                # Snapshots of earlier versions named cleanup timers apart ("event-cleanup").
                self.register_timer(kind.removesuffix("-cleanup"), timestamp, key, window)
