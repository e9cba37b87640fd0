"""The broadcast process functions (Flink's and PyFlink's) and their contexts: what the
two-input operator of ``other.connect(broadcast).process(function)`` calls."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from flowmagic.vocabulary.functions import Function

__all__ = ["BaseBroadcastProcessFunction", "BroadcastProcessFunction", "KeyedBroadcastProcessFunction"]

KEY = TypeVar("KEY")
IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")
OUT = TypeVar("OUT")


class _BaseContext:
    """``timestamp()``, ``current_processing_time()``, ``current_watermark()`` and
    ``output(tag, value)`` (the runtime implements it)."""


class _Context(_BaseContext):
    """The broadcast side's ``ctx``: also ``get_broadcast_state(descriptor)``, read and write."""


class _ReadOnlyContext(_BaseContext):
    """The other side's ``ctx``: also ``get_broadcast_state(descriptor)``, read only."""


class _KeyedContext(_Context):
    """The broadcast side's ``ctx`` of a keyed function: also
    ``apply_to_keyed_state(descriptor, function)``, which calls ``function(key, state)`` for
    every key of this subtask that has the state."""


class _KeyedReadOnlyContext(_ReadOnlyContext):
    """The keyed side's ``ctx``: also ``timer_service()`` and ``get_current_key()``."""


class _OnTimerContext(_KeyedReadOnlyContext):
    """``ctx`` of ``on_timer``: as the keyed side's (``timestamp()`` is the timer's time)."""


class BaseBroadcastProcessFunction(Function):
    """What the two broadcast process functions share: their contexts' base."""

    BaseContext = _BaseContext
    Context = _Context
    ReadOnlyContext = _ReadOnlyContext


class BroadcastProcessFunction(BaseBroadcastProcessFunction, Generic[IN1, IN2, OUT]):
    """``process_element(value, ctx)`` per record of the non-broadcast (unkeyed) stream, with
    read-only access to the broadcast state; ``process_broadcast_element(value, ctx)`` per
    broadcast record, with read-write access. Each returns (or yields) its records, or takes
    an ``out`` collector after ``ctx``."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        raise NotImplementedError

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        raise NotImplementedError


class KeyedBroadcastProcessFunction(BaseBroadcastProcessFunction, Generic[KEY, IN1, IN2, OUT]):
    """As :class:`BroadcastProcessFunction`, on a KeyedStream: the keyed side has keyed
    state and timers (``on_timer``); the broadcast side can visit every key's state with
    ``ctx.apply_to_keyed_state(descriptor, function)``."""

    Context = _KeyedContext
    ReadOnlyContext = _KeyedReadOnlyContext
    OnTimerContext = _OnTimerContext

    def process_element(self, value: Any, ctx: Any) -> Any:
        raise NotImplementedError

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        raise NotImplementedError

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        """Called when a timer registered through ``ctx.timer_service()`` fires."""
