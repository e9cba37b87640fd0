"""The broadcast state pattern's operator (Flink's ``CoBroadcastWithNonKeyedOperator`` and
``CoBroadcastWithKeyedOperator``), and broadcast state.

Input 1 is the non-broadcast stream: ``process_element(value, ctx)`` reads the broadcast
states. Input 2 is the broadcast stream, which every subtask receives whole:
``process_broadcast_element(value, ctx)`` may change them, so that every subtask holds the
same broadcast states as long as the function changes them from broadcast records only.
Broadcast state is operator state: a snapshot holds each subtask's copy, and a restore at a
higher parallelism gives the new subtasks copies, round robin, as Flink does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from flowmagic.errors import ProgramError
from flowmagic.graph.operator_params import BroadcastProcessParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.operators.context import (
    ProcessContext,
    RuntimeContext,
    TimerService,
    adapt,
    emit_all,
    with_collector,
)
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.operators.process import ProcessOperator
from flowmagic.runtime.registry import register
from flowmagic.runtime.state.keyed_state import KeyedStateBackend
from flowmagic.vocabulary import state
from flowmagic.vocabulary.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)

__all__ = ["BroadcastContext", "BroadcastState", "CoBroadcastProcessOperator", "ReadOnlyBroadcastState"]

_UNKNOWN_STATE = (
    "The requested state does not exist. Check for typos in your state descriptor, or specify the "
    "state descriptor in the datastream.broadcast(...) call if you forgot to register it."
)


class ReadOnlyBroadcastState(state.ReadOnlyBroadcastState):
    """A broadcast state as ``process_element`` sees it."""

    def __init__(self, entries: dict[Any, Any]):
        self._entries = entries

    def get(self, key: Any) -> Any:
        return self._entries.get(key)

    def contains(self, key: Any) -> bool:
        return key in self._entries

    def items(self) -> list[tuple[Any, Any]]:
        return list(self._entries.items())

    def keys(self) -> list[Any]:
        return list(self._entries)

    def values(self) -> list[Any]:
        return list(self._entries.values())

    def is_empty(self) -> bool:
        return not self._entries

    def __getitem__(self, key: Any) -> Any:
        return self.get(key)

    def __contains__(self, key: Any) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys())


class BroadcastState(ReadOnlyBroadcastState, state.BroadcastState):
    """A broadcast state as ``process_broadcast_element`` sees it: read and write."""

    def put(self, key: Any, value: Any) -> None:
        self._entries[key] = value

    def put_all(self, mapping: dict[Any, Any]) -> None:
        self._entries.update(mapping)

    def remove(self, key: Any) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

    def __setitem__(self, key: Any, value: Any) -> None:
        self.put(key, value)

    def __delitem__(self, key: Any) -> None:
        self.remove(key)


class _States:
    """The broadcast states of one subtask, by descriptor name."""

    def __init__(self, descriptors: tuple[MapStateDescriptor, ...]):
        self.entries: dict[str, dict[Any, Any]] = {descriptor.name: {} for descriptor in descriptors}

    def of(self, descriptor: Any) -> dict[Any, Any]:
        if not isinstance(descriptor, MapStateDescriptor) or descriptor.name not in self.entries:
            raise ProgramError(_UNKNOWN_STATE)
        return self.entries[descriptor.name]


class ReadOnlyContext(ProcessContext):
    """``ctx`` of ``process_element`` and ``on_timer``: the record's timestamp, side outputs,
    time, read-only broadcast state and, when keyed, timers and the current key."""

    def __init__(
        self,
        emit_side: Callable[[str, Any, int | None], None],
        timers: TimerService,
        backend: KeyedStateBackend | None,
        states: _States,
        missing_timestamp: int | None,
    ):
        super().__init__(emit_side, timers, backend, missing_timestamp=missing_timestamp)
        self._states = states

    def current_processing_time(self) -> int:
        return self.timer_service().current_processing_time()

    def current_watermark(self) -> int:
        return self.timer_service().current_watermark()

    def get_broadcast_state(self, state_descriptor: MapStateDescriptor) -> ReadOnlyBroadcastState:
        return ReadOnlyBroadcastState(self._states.of(state_descriptor))


class BroadcastContext:
    """``ctx`` of ``process_broadcast_element``: the record's timestamp, side outputs, time,
    read-write broadcast state and, when keyed, ``apply_to_keyed_state``. It has no current
    key: a broadcast record belongs to no key."""

    def __init__(self, operator: CoBroadcastProcessOperator):
        self._operator = operator
        self.current_timestamp: int | None = None

    def timestamp(self) -> int | None:
        return self._operator.missing_timestamp if self.current_timestamp is None else self.current_timestamp

    def current_processing_time(self) -> int:
        return self._operator.timers.current_processing_time()

    def current_watermark(self) -> int:
        return self._operator.timers.current_watermark()

    def output(self, tag: Any, value: Any) -> None:
        self._operator.output.side(getattr(tag, "tag_id", tag), value, self.current_timestamp)

    def get_broadcast_state(self, state_descriptor: MapStateDescriptor) -> BroadcastState:
        return BroadcastState(self._operator.states.of(state_descriptor))

    def apply_to_keyed_state(self, state_descriptor: StateDescriptor, function: Any) -> None:
        """Call ``function(key, state)`` (or ``function.process(key, state)``) for every key
        of this subtask that has the state of ``state_descriptor``."""
        self._operator.apply_to_keyed_state(state_descriptor, function)


@register(OperatorKind.CO_BROADCAST_PROCESS, OperatorKind.CO_BROADCAST_KEYED_PROCESS)
class CoBroadcastProcessOperator(ProcessOperator):
    """A (Keyed)BroadcastProcessFunction over a stream (input 1) and a broadcast stream (input 2)."""

    keyed_timers = True

    def __init__(self, name: str, params: BroadcastProcessParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.states = _States(params.descriptors)
        self.context = ReadOnlyContext(self._side, self.timers, self.backend, self.states, self.missing_timestamp)
        self.broadcast_function = with_collector(adapt(self.user_function, "process_broadcast_element"), 2)
        self.broadcast_context = BroadcastContext(self)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        if side == 1:
            super().process(value, timestamp, side)
            return
        context = self.broadcast_context
        # The collector stamps records with the (read-only) context's timestamp.
        context.current_timestamp = self.context.current_timestamp = timestamp
        try:
            emit_all(self.broadcast_function(value, context, self.out), self.out.collect)
        except Exception as error:
            raise self.fail(error, value) from error

    def apply_to_keyed_state(self, descriptor: StateDescriptor, function: Any) -> None:
        if self.backend is None:
            raise ProgramError("apply_to_keyed_state() needs a keyed stream (a KeyedBroadcastProcessFunction).")
        handle = _keyed_state(self.runtime_context, descriptor)
        call = adapt(function, "process")
        backend = self.backend
        table = handle._table
        previous = backend.current_key
        try:
            for key in list(table):
                backend.current_key = key
                call(key, handle)
        finally:
            backend.current_key = previous

    def snapshot_operator_state(self) -> Any:
        return {name: dict(entries) for name, entries in self.states.entries.items()}

    def restore_operator_state(self, snapshot: Any) -> None:
        for name, entries in snapshot.items():
            if name in self.states.entries:
                self.states.entries[name].clear()
                self.states.entries[name].update(entries)


def _keyed_state(context: RuntimeContext, descriptor: StateDescriptor) -> Any:
    """The keyed state ``descriptor`` names, got as the function's ``open`` would get it."""
    if isinstance(descriptor, ValueStateDescriptor):
        return context.get_state(descriptor)
    if isinstance(descriptor, ListStateDescriptor):
        return context.get_list_state(descriptor)
    if isinstance(descriptor, MapStateDescriptor):
        return context.get_map_state(descriptor)
    if isinstance(descriptor, ReducingStateDescriptor):
        return context.get_reducing_state(descriptor)
    if isinstance(descriptor, AggregatingStateDescriptor):
        return context.get_aggregating_state(descriptor)
    raise ProgramError(f"apply_to_keyed_state() expects a state descriptor, got {descriptor!r}.")
