"""Process functions, with state and timers on keyed streams.

A function either returns (or yields) its records, as in PyFlink (``process_element(value,
ctx)``, ``on_timer(timestamp, ctx)``), or emits them through a collector, as in Flink's Java
API (``process_element(value, ctx, out)``); its signature says which.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flowmagic.graph.operator_params import ProcessParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.operators.context import ProcessContext, TimerService, emit_all, with_collector
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.operators.stateless import FunctionOperator
from flowmagic.runtime.records import MAX_WATERMARK, MIN_WATERMARK
from flowmagic.runtime.registry import register
from flowmagic.vocabulary.time_domain import TimeDomain

__all__ = ["Collector", "KeyedProcessOperator", "ProcessOperator"]


class Collector:
    """The ``out`` of process functions: ``out.collect(v)`` keeps the current timestamp."""

    __slots__ = ("_collect", "_context")

    def __init__(self, collect: Callable[[Any, int | None], None], context: ProcessContext):
        self._collect = collect
        self._context = context

    def collect(self, value: Any) -> None:
        self._collect(value, self._context.current_timestamp)


@register(OperatorKind.PROCESS)
class ProcessOperator(FunctionOperator):
    """``process(value, ctx, out)``; on a KeyedStream with keyed state (Flink's ProcessOperator)."""

    method = "process_element"
    #: Whether the function may register timers: Flink's ProcessOperator rejects them even on a
    #: KeyedStream; only keyed process operators have a keyed timer service.
    keyed_timers = False
    #: Keyed state and timers change only for the current key (records' and timers').
    tracks_changes = True

    def __init__(self, name: str, params: ProcessParams, task: TaskInfo):
        self.keyed = params.key_selector is not None
        super().__init__(name, params, task)
        self.missing_timestamp = task.dialect.missing_timestamp
        self.key_selector = params.key_selector
        # Every function may read the time; registering timers needs a keyed timer service.
        self.timers = TimerService(self.backend if self.keyed_timers else None, task.clock)
        self.context = ProcessContext(self._side, self.timers, self.backend, missing_timestamp=self.missing_timestamp)
        self.function = with_collector(self.function, 2)
        self.on_timer = self._timer_function(getattr(self.user_function, "on_timer", None))

    @staticmethod
    def _timer_function(on_timer: Any) -> Any:
        return None if on_timer is None else with_collector(on_timer, 2)

    def _side(self, tag: str, value: Any, timestamp: int | None) -> None:
        self.output.side(tag, value, timestamp)

    def _out(self) -> Collector:
        return Collector(self.output.collect, self.context)

    def open(self) -> None:
        super().open()
        self.out = self._out()

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        context = self.context
        context.current_timestamp = timestamp
        try:
            if self.key_selector is not None:
                self.keyed_state.current_key = self.key_selector(value)
            emit_all(self.function(value, context, self.out), self.out.collect)
        except Exception as error:
            raise self.fail(error, value) from error
        if self.timers.processing_timers:
            self.advance_processing_time(self.timers.current_processing_time())

    def _fire(self, timestamp: int, key: Any, domain: TimeDomain) -> None:
        if self.on_timer is None:
            return
        self.keyed_state.current_key = key
        self.context.current_timestamp = timestamp
        self.context.current_time_domain = domain
        try:
            emit_all(self.on_timer(timestamp, self.context, self.out), self.out.collect)
        except Exception as error:
            raise self.fail(error, f"timer {timestamp} of key {key!r}") from error
        finally:
            self.context.current_time_domain = None

    def advance_processing_time(self, now: int) -> None:
        for timestamp, key in self.timers.due_processing_timers(now):
            self._fire(timestamp, key, TimeDomain.PROCESSING_TIME)

    def next_processing_timer(self) -> int | None:
        return self.timers.next_processing_timer()

    def pending_timers(self) -> int:
        return len(self.timers.event_timers) + len(self.timers.processing_timers)

    def snapshot_keyed(self, keys: Iterable[Any] | None = None) -> dict[Any, dict[str, Any]]:
        entries = super().snapshot_keyed(keys)
        self.timers.snapshot_into(entries, keys)
        return entries

    def restore_keyed(self, entries: dict[Any, dict[str, Any]]) -> None:
        super().restore_keyed(entries)
        self.timers.restore_from(entries)

    def process_watermark(self, watermark: int) -> None:
        self.timers.current_watermark_value = watermark
        for timestamp, key in self.timers.due_event_timers(watermark):
            self._fire(timestamp, key, TimeDomain.EVENT_TIME)
        self.output.emit_watermark(watermark)

    def finish_key(self) -> None:
        # Flink's BatchExecutionInternalTimeService: the key's timers fire as if at the end of
        # time, and the next key starts again without a watermark.
        self.timers.current_watermark_value = MAX_WATERMARK
        for timestamp, key in self.timers.due_event_timers(MAX_WATERMARK):
            self._fire(timestamp, key, TimeDomain.EVENT_TIME)
        self.advance_processing_time(MAX_WATERMARK)
        self.timers.current_watermark_value = MIN_WATERMARK

    def end_input(self) -> None:
        # The clock of a bounded job jumps to the end: pending processing-time timers fire.
        self.advance_processing_time(MAX_WATERMARK)


@register(OperatorKind.KEYED_PROCESS)
class KeyedProcessOperator(ProcessOperator):
    """A KeyedProcessFunction: keyed state, timers and ``on_timer``."""

    keyed_timers = True
