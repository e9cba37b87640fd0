"""What user functions see while they run: runtime context, keyed state, timers, contexts.

Mirrors PyFlink's ``RuntimeContext`` (keyed state is in :mod:`flowmagic.runtime.state.keyed_state`),
``TimerService`` and ``ProcessFunction.Context``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from flowmagic.errors import ProgramError
from flowmagic.runtime.clock import WALL_CLOCK, Clock
from flowmagic.runtime.records import MIN_WATERMARK
from flowmagic.runtime.state.keyed_state import (
    AggregatingState,
    KeyedStateBackend,
    ListState,
    MapState,
    ReducingState,
    ValueState,
)
from flowmagic.runtime.state.state_ttl import (
    TtlAggregatingState,
    TtlListState,
    TtlMapState,
    TtlPolicy,
    TtlReducingState,
    TtlValueState,
)
from flowmagic.runtime.state.timer_queue import TimerQueue
from flowmagic.runtime.user_metrics import MetricGroup
from flowmagic.vocabulary import functions
from flowmagic.vocabulary.functions import takes_collector
from flowmagic.vocabulary.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)
from flowmagic.vocabulary.time_domain import TimeDomain

__all__ = [
    "KeyedStateBackend",
    "KeyedStateStore",
    "ProcessContext",
    "RuntimeContext",
    "TimerService",
    "adapt",
    "emit_all",
    "takes_collector",
    "with_collector",
]


def adapt(function: Any, method: str) -> Callable[..., Any]:
    """The callable to invoke: ``function.<method>`` for function objects, else ``function``."""
    bound = getattr(function, method, None)
    if bound is not None and callable(bound) and not isinstance(function, type):
        return bound
    return function


def emit_all(result: Any, collect: Callable[[Any], None]) -> None:
    """Emit what a function returned when it returns (or yields) records instead of using ``out``."""
    if result is None:
        return
    for value in result:
        collect(value)


class _DropCollector:
    """A PyFlink-style function called as a collector-style one: the ``out`` is left out
    and the records it returns (or yields) are emitted by the caller."""

    __slots__ = ("function",)

    def __init__(self, function: Callable[..., Any]):
        self.function = function

    def __call__(self, *arguments: Any) -> Any:
        return self.function(*arguments[:-1])


def with_collector(function: Callable[..., Any], arguments: int) -> Callable[..., Any]:
    """``function`` callable with its ``arguments`` and an ``out`` last, whichever style it
    has (see :func:`takes_collector`); decided once, when the operator is made."""
    return function if takes_collector(function, arguments) else _DropCollector(function)


#: Flink's ``StateDescriptor.Type`` of each kind of descriptor.
#: A keyed snapshot entry's field holding the key's pending timers (beside its states).
TIMERS_ENTRY = "@timers"

_STATE_TYPES = {
    ValueStateDescriptor: "VALUE",
    ListStateDescriptor: "LIST",
    MapStateDescriptor: "MAP",
    ReducingStateDescriptor: "REDUCING",
    AggregatingStateDescriptor: "AGGREGATING",
}


class KeyedStateStore:
    """PyFlink's ``KeyedStateStore``: ``get_state(descriptor)`` and the other state kinds,
    scoped by the current key of ``backend`` (a window function's ``window_state()`` is one
    scoped by key and window)."""

    def __init__(self, backend: KeyedStateBackend | None, clock: Clock = WALL_CLOCK):
        self._backend = backend
        self._clock = clock

    def _keyed(self, descriptor: StateDescriptor, kind: type[StateDescriptor]) -> KeyedStateBackend:
        if not isinstance(descriptor, kind):
            raise ProgramError(f"Expected a {kind.__name__}, got {descriptor!r}.")
        if self._backend is None:
            raise ProgramError(
                f"Keyed state can only be used on a 'keyed stream', i.e., after a 'keyBy()' ({descriptor.name})."
            )
        self._backend.declare(descriptor.name, _STATE_TYPES[kind], descriptor.type_info)
        return self._backend

    def _ttl(self, descriptor: StateDescriptor) -> TtlPolicy | None:
        config = descriptor.ttl_config
        return TtlPolicy(config, self._clock) if config is not None and config.is_enabled() else None

    def get_state(self, state_descriptor: ValueStateDescriptor) -> ValueState:
        backend, name = self._keyed(state_descriptor, ValueStateDescriptor), f"value:{state_descriptor.name}"
        ttl = self._ttl(state_descriptor)
        return ValueState(backend, name) if ttl is None else TtlValueState(backend, name, ttl)

    def get_list_state(self, state_descriptor: ListStateDescriptor) -> ListState:
        backend, name = self._keyed(state_descriptor, ListStateDescriptor), f"list:{state_descriptor.name}"
        ttl = self._ttl(state_descriptor)
        return ListState(backend, name) if ttl is None else TtlListState(backend, name, ttl)

    def get_map_state(self, state_descriptor: MapStateDescriptor) -> MapState:
        backend, name = self._keyed(state_descriptor, MapStateDescriptor), f"map:{state_descriptor.name}"
        ttl = self._ttl(state_descriptor)
        return MapState(backend, name) if ttl is None else TtlMapState(backend, name, ttl)

    def get_reducing_state(self, state_descriptor: ReducingStateDescriptor) -> ReducingState:
        backend, name = self._keyed(state_descriptor, ReducingStateDescriptor), f"reducing:{state_descriptor.name}"
        reduce, ttl = state_descriptor.get_reduce_function(), self._ttl(state_descriptor)
        return ReducingState(backend, name, reduce) if ttl is None else TtlReducingState(backend, name, reduce, ttl)

    def get_aggregating_state(self, state_descriptor: AggregatingStateDescriptor) -> AggregatingState:
        backend = self._keyed(state_descriptor, AggregatingStateDescriptor)
        name, function = f"aggregating:{state_descriptor.name}", state_descriptor.get_agg_function()
        ttl = self._ttl(state_descriptor)
        if ttl is None:
            return AggregatingState(backend, name, function)
        return TtlAggregatingState(backend, name, function, ttl)


class RuntimeContext(KeyedStateStore, functions.RuntimeContext):
    """``open(runtime_context)`` receives this: who the subtask is, its keyed state, the
    job's parameters and the operator's metric group."""

    def __init__(
        self,
        task_name: str,
        index: int,
        parallelism: int,
        max_parallelism: int,
        attempt: int,
        backend: KeyedStateBackend | None,
        *,
        clock: Clock = WALL_CLOCK,
        metrics: MetricGroup | None = None,
        job_parameters: dict[str, str] | None = None,
    ):
        self._task_name = task_name
        self._index = index
        self._parallelism = parallelism
        self._max_parallelism = max_parallelism
        self._attempt = attempt
        super().__init__(backend, clock)
        self._metrics = metrics
        self._job_parameters = dict(job_parameters or {})

    def get_task_name(self) -> str:
        return self._task_name

    def get_task_name_with_subtasks(self) -> str:
        return f"{self._task_name} ({self._index + 1}/{self._parallelism})#{self._attempt}"

    def get_index_of_this_subtask(self) -> int:
        return self._index

    def get_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_max_number_of_parallel_subtasks(self) -> int:
        return self._max_parallelism

    def get_attempt_number(self) -> int:
        return self._attempt

    def get_job_parameter(self, key: str, default_value: str | None) -> str | None:
        """The global job parameter ``key`` (Flink's ``pipeline.global-job-parameters``, set in
        the Configuration of ``get_execution_environment``), else ``default_value``."""
        return self._job_parameters.get(key, default_value)

    def get_metrics_group(self) -> MetricGroup:
        """The operator's metric group: its counters, gauges, meters and distributions
        appear in the job's live view and final metrics, per subtask."""
        if self._metrics is None:
            raise ProgramError("This function runs outside of a task: it has no metric group.")
        return self._metrics


class TimerService(functions.TimerService):
    """Event-time and processing-time timers of a keyed operator, one per (time, key), fired
    in Flink's order (:class:`~flowmagic.runtime.state.timer_queue.TimerQueue`)."""

    def __init__(self, backend: KeyedStateBackend | None, clock: Clock = WALL_CLOCK):
        self._backend = backend
        self._clock = clock
        self.current_watermark_value = MIN_WATERMARK
        self.event_timers = TimerQueue()
        self.processing_timers = TimerQueue()

    def _check_keyed(self, action: str = "Setting") -> KeyedStateBackend:
        if self._backend is None:
            raise ProgramError(f"{action} timers is only supported on a keyed streams.")
        return self._backend

    def current_processing_time(self) -> int:
        return self._clock.now()

    def snapshot_into(self, entries: dict[Any, dict[str, Any]], keys: Iterable[Any] | None = None) -> None:
        """Add each key's pending timers (of ``keys``; None: of every key) to its entry of a
        keyed snapshot, as ``"@timers": [(kind, timestamp), ...]`` in the order of the timer
        heaps (as Flink writes them)."""
        wanted = None if keys is None else set(keys)
        for kind, queue in (("event", self.event_timers), ("processing", self.processing_timers)):
            for timer in queue:
                if wanted is None or timer.key in wanted:
                    entries.setdefault(timer.key, {}).setdefault(TIMERS_ENTRY, []).append((kind, timer.timestamp))

    def restore_from(self, entries: dict[Any, dict[str, Any]]) -> None:
        """Register the timers of a keyed snapshot's entries (see :meth:`snapshot_into`) again."""
        for key, states in entries.items():
            for kind, timestamp in states.get(TIMERS_ENTRY, ()):
                (self.event_timers if kind == "event" else self.processing_timers).add(timestamp, key)

    def current_watermark(self) -> int:
        return self.current_watermark_value

    def register_event_time_timer(self, timestamp: int) -> None:
        self.event_timers.add(timestamp, self._check_keyed().current_key)

    def register_processing_time_timer(self, timestamp: int) -> None:
        self.processing_timers.add(timestamp, self._check_keyed().current_key)

    def delete_event_time_timer(self, timestamp: int) -> None:
        self.event_timers.remove(timestamp, self._check_keyed("Deleting").current_key)

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self.processing_timers.remove(timestamp, self._check_keyed("Deleting").current_key)

    def due_event_timers(self, watermark: int) -> Iterator[tuple[int, Any]]:
        """Take every event-time timer with ``timestamp <= watermark``, in firing order."""
        for timer in self.event_timers.pop_due(watermark):
            yield timer.timestamp, timer.key

    def due_processing_timers(self, now: int) -> Iterator[tuple[int, Any]]:
        for timer in self.processing_timers.pop_due(now):
            yield timer.timestamp, timer.key

    def next_processing_timer(self) -> int | None:
        """When the earliest processing-time timer is due (None: none is set)."""
        head = self.processing_timers.peek()
        return None if head is None else head.timestamp


class ProcessContext(functions.OnTimerContext):
    """The ``ctx`` of ``process(value, ctx, out)`` and of ``on_timer``."""

    def __init__(
        self,
        emit_side: Callable[[str, Any, int | None], None],
        timers: TimerService,
        backend: KeyedStateBackend | None,
        *,
        missing_timestamp: int | None = None,
    ):
        self._emit_side = emit_side
        self._timers = timers
        self._backend = backend
        self.current_timestamp: int | None = None
        #: What ``timestamp()`` answers for a record without one (PyFlink: Long.MIN_VALUE).
        self.missing_timestamp = missing_timestamp
        #: While ``on_timer`` runs: the domain of the firing timer.
        self.current_time_domain: TimeDomain | None = None

    def timestamp(self) -> int | None:
        """The event timestamp of the current record (when it has none: None, as Java's
        null; Long.MIN_VALUE in a program of PyFlink's API, as PyFlink's)."""
        return self.missing_timestamp if self.current_timestamp is None else self.current_timestamp

    def time_domain(self) -> TimeDomain:
        """In ``on_timer``: whether the firing timer is an event-time or a processing-time one."""
        if self.current_time_domain is None:
            raise ProgramError("time_domain() is only available in on_timer(), on the context of a firing timer.")
        return self.current_time_domain

    def timer_service(self) -> TimerService:
        """Current time and watermark; registering timers needs a keyed stream."""
        return self._timers

    def output(self, tag: Any, value: Any) -> None:
        """Emit ``value`` to the side output ``tag`` (an OutputTag)."""
        self._emit_side(getattr(tag, "tag_id", tag), value, self.current_timestamp)

    def get_current_key(self) -> Any:
        if self._backend is None:
            raise ProgramError("get_current_key() is only available on a keyed stream.")
        return self._backend.current_key
