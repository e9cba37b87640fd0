"""What user functions see while they run: runtime context, keyed state, timers, contexts.

Mirrors PyFlink's ``RuntimeContext``, ``ValueState``/``ListState``/``MapState``,
``TimerService`` and ``ProcessFunction.Context``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from flowmagic.api import functions, state
from flowmagic.api.functions import takes_collector
from flowmagic.api.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from flowmagic.errors import ProgramError
from flowmagic.runtime.clock import WALL_CLOCK, Clock
from flowmagic.runtime.records import MIN_WATERMARK

__all__ = [
    "KeyedStateBackend",
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


class KeyedStateBackend:
    """Per-key state of one operator subtask; ``current_key`` scopes every state access."""

    def __init__(self) -> None:
        self._current_key: Any = None
        self._tables: dict[str, dict[Any, Any]] = {}
        #: When a set, every key made current is added to it: a key's state can change only
        #: while it is current, so these are the keys an incremental snapshot writes.
        self.touched: set[Any] | None = None

    @property
    def current_key(self) -> Any:
        return self._current_key

    @current_key.setter
    def current_key(self, key: Any) -> None:
        self._current_key = key
        if self.touched is not None:
            self.touched.add(key)

    def table(self, name: str) -> dict[Any, Any]:
        return self._tables.setdefault(name, {})

    def snapshot(self, keys: Iterable[Any] | None = None) -> dict[Any, dict[str, Any]]:
        """Every key's state (or the state of ``keys``), as ``{key: {state name: value}}``."""
        entries: dict[Any, dict[str, Any]] = {}
        for name, table in self._tables.items():
            if keys is None:
                for key, value in table.items():
                    entries.setdefault(key, {})[name] = value
                continue
            for key in keys:
                if key in table:
                    entries.setdefault(key, {})[name] = table[key]
        return entries

    def restore(self, entries: dict[Any, dict[str, Any]]) -> None:
        """Add the state of ``entries`` (from :meth:`snapshot`) to this backend's."""
        for key, states in entries.items():
            for name, value in states.items():
                if not name.startswith("@"):
                    self.table(name)[key] = value


class _State:
    def __init__(self, backend: KeyedStateBackend, name: str):
        self._backend = backend
        self._table = backend.table(name)

    def clear(self) -> None:
        self._table.pop(self._backend.current_key, None)


class ValueState(_State, state.ValueState):
    def value(self) -> Any:
        return self._table.get(self._backend.current_key)

    def update(self, value: Any) -> None:
        self._table[self._backend.current_key] = value


class ListState(_State, state.ListState):
    def get(self) -> list[Any]:
        return list(self._table.get(self._backend.current_key, ()))

    def add(self, value: Any) -> None:
        self._table.setdefault(self._backend.current_key, []).append(value)

    def add_all(self, values: list[Any]) -> None:
        self._table.setdefault(self._backend.current_key, []).extend(values)

    def update(self, values: list[Any]) -> None:
        self._table[self._backend.current_key] = list(values)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.get())


class MapState(_State, state.MapState):
    def _map(self) -> dict[Any, Any]:
        return self._table.setdefault(self._backend.current_key, {})

    def get(self, key: Any) -> Any:
        return self._table.get(self._backend.current_key, {}).get(key)

    def put(self, key: Any, value: Any) -> None:
        self._map()[key] = value

    def put_all(self, mapping: dict[Any, Any]) -> None:
        self._map().update(mapping)

    def remove(self, key: Any) -> None:
        self._map().pop(key, None)

    def contains(self, key: Any) -> bool:
        return key in self._table.get(self._backend.current_key, {})

    def keys(self) -> list[Any]:
        return list(self._table.get(self._backend.current_key, {}).keys())

    def values(self) -> list[Any]:
        return list(self._table.get(self._backend.current_key, {}).values())

    def items(self) -> list[tuple[Any, Any]]:
        return list(self._table.get(self._backend.current_key, {}).items())

    def is_empty(self) -> bool:
        return not self._table.get(self._backend.current_key)


class RuntimeContext(functions.RuntimeContext):
    """``open(runtime_context)`` receives this: who the subtask is, and its keyed state."""

    def __init__(
        self,
        task_name: str,
        index: int,
        parallelism: int,
        max_parallelism: int,
        attempt: int,
        backend: KeyedStateBackend | None,
    ):
        self._task_name = task_name
        self._index = index
        self._parallelism = parallelism
        self._max_parallelism = max_parallelism
        self._attempt = attempt
        self._backend = backend

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

    def _keyed(self, what: str) -> KeyedStateBackend:
        if self._backend is None:
            raise ProgramError(f"Keyed state can only be used on a 'keyed stream', i.e., after a 'keyBy()' ({what}).")
        return self._backend

    def get_state(self, descriptor: ValueStateDescriptor) -> ValueState:
        return ValueState(self._keyed(descriptor.name), f"value:{descriptor.name}")

    def get_list_state(self, descriptor: ListStateDescriptor) -> ListState:
        return ListState(self._keyed(descriptor.name), f"list:{descriptor.name}")

    def get_map_state(self, descriptor: MapStateDescriptor) -> MapState:
        return MapState(self._keyed(descriptor.name), f"map:{descriptor.name}")


class TimerService(functions.TimerService):
    """Event-time and processing-time timers of a keyed operator, deduplicated per (time, key)."""

    def __init__(self, backend: KeyedStateBackend | None, clock: Clock = WALL_CLOCK):
        self._backend = backend
        self._clock = clock
        self.current_watermark_value = MIN_WATERMARK
        self._event: list[tuple[int, int, Any]] = []
        self._processing: list[tuple[int, int, Any]] = []
        self._registered: set[tuple[str, int, Any]] = set()
        self._sequence = 0

    def _check_keyed(self, action: str = "Setting") -> KeyedStateBackend:
        if self._backend is None:
            raise ProgramError(f"{action} timers is only supported on a keyed streams.")
        return self._backend

    def current_processing_time(self) -> int:
        return self._clock.now()

    def snapshot(self) -> dict[Any, list[tuple[str, int]]]:
        """Every key's pending timers in firing order, as ``{key: [(kind, timestamp), ...]}``."""
        entries: dict[Any, list[tuple[str, int]]] = {}
        pending = [("event", entry) for entry in self._event] + [("processing", entry) for entry in self._processing]
        registered = set(self._registered)
        for kind, (timestamp, _sequence, key) in sorted(pending, key=lambda timer: timer[1][:2]):
            if (kind, timestamp, key) in registered:
                registered.discard((kind, timestamp, key))
                entries.setdefault(key, []).append((kind, timestamp))
        return entries

    def restore(self, entries: dict[Any, list[tuple[str, int]]]) -> None:
        """Register the timers of ``entries`` (from :meth:`snapshot`) again."""
        for key, timers in entries.items():
            for kind, timestamp in timers:
                marker = (kind, timestamp, key)
                if marker in self._registered:
                    continue
                self._registered.add(marker)
                self._sequence += 1
                heapq.heappush(self._event if kind == "event" else self._processing, (timestamp, self._sequence, key))

    def current_watermark(self) -> int:
        return self.current_watermark_value

    def _register(self, kind: str, heap: list, timestamp: int) -> None:
        key = self._check_keyed().current_key
        marker = (kind, timestamp, key)
        if marker in self._registered:
            return
        self._registered.add(marker)
        self._sequence += 1
        heapq.heappush(heap, (timestamp, self._sequence, key))

    def register_event_time_timer(self, timestamp: int) -> None:
        self._register("event", self._event, timestamp)

    def register_processing_time_timer(self, timestamp: int) -> None:
        self._register("processing", self._processing, timestamp)

    def delete_event_time_timer(self, timestamp: int) -> None:
        self._registered.discard(("event", timestamp, self._check_keyed("Deleting").current_key))

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._registered.discard(("processing", timestamp, self._check_keyed("Deleting").current_key))

    def due_event_timers(self, watermark: int) -> Iterator[tuple[int, Any]]:
        """Pop every event-time timer with ``timestamp <= watermark``, in time order."""
        yield from self._due("event", self._event, watermark)

    def due_processing_timers(self, now: int) -> Iterator[tuple[int, Any]]:
        yield from self._due("processing", self._processing, now)

    def next_processing_timer(self) -> int | None:
        """When the earliest processing-time timer is due (None: none is set). A deleted
        timer may still answer, which only wakes the operator early."""
        return self._processing[0][0] if self._processing else None

    def _due(self, kind: str, heap: list, limit: int) -> Iterator[tuple[int, Any]]:
        while heap and heap[0][0] <= limit:
            timestamp, _sequence, key = heapq.heappop(heap)
            marker = (kind, timestamp, key)
            if marker in self._registered:
                self._registered.discard(marker)
                yield timestamp, key


class ProcessContext(functions.OnTimerContext):
    """The ``ctx`` of ``process(value, ctx, out)`` and of ``on_timer``."""

    def __init__(
        self,
        emit_side: Callable[[str, Any, int | None], None],
        timers: TimerService,
        backend: KeyedStateBackend | None,
    ):
        self._emit_side = emit_side
        self._timers = timers
        self._backend = backend
        self.current_timestamp: int | None = None

    def timestamp(self) -> int | None:
        """The event timestamp of the current record (None when it has none)."""
        return self.current_timestamp

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
