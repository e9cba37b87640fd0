"""Helpers about user functions and side-output tags."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from flowmagic.errors import ProgramError

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "FilterFunction",
    "FlatMapFunction",
    "Function",
    "KeySelector",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "MapFunction",
    "OutputTag",
    "Partitioner",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "SinkFunction",
    "TimerService",
    "WindowFunction",
    "function_name",
    "takes_collector",
]

IN = TypeVar("IN")
OUT = TypeVar("OUT")
KEY = TypeVar("KEY")
W = TypeVar("W")


class RuntimeContext:
    """What ``open(runtime_context)`` receives: the subtask (``get_index_of_this_subtask()``
    ...) and, on keyed streams, state (``get_state(descriptor)`` ...). The runtime gives an
    implementation; this class is for type hints, as PyFlink's."""


class TimerService:
    """``ctx.timer_service()``: ``current_processing_time()``, ``current_watermark()`` and,
    on keyed streams, ``register_event_time_timer(ts)`` ... (the runtime implements it)."""


class Context:
    """``ctx`` of a process function: ``timestamp()``, ``timer_service()``,
    ``output(tag, value)`` and, on keyed streams, ``get_current_key()``."""


class OnTimerContext(Context):
    """``ctx`` of ``on_timer``: as :class:`Context` (``timestamp()`` is the timer's time),
    and ``time_domain()``: the firing timer's :class:`~flowmagic.vocabulary.time_domain.TimeDomain`."""


@dataclass(frozen=True)
class OutputTag:
    """Names a side output: ``ctx.output(tag, value)`` emits to it, ``get_side_output(tag)`` reads it."""

    tag_id: str
    type_info: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.tag_id, str) or not self.tag_id:
            raise ProgramError("OutputTag id must not be empty.")


def function_name(function: Any) -> str:
    """How a user function is named in operator descriptions: its ``__name__`` for functions
    (``<lambda>`` for lambdas) and its class name for function objects."""
    name = getattr(function, "__name__", None)
    return name if isinstance(name, str) else type(function).__name__


class Function:
    """Base of function classes: optional ``open(runtime_context)`` / ``close()`` hooks."""

    def open(self, runtime_context: Any) -> None:
        """Called once per subtask before the first record."""

    def close(self) -> None:
        """Called once per subtask after the last record."""


class MapFunction(Function):
    def map(self, value: Any) -> Any:
        raise NotImplementedError


class FlatMapFunction(Function):
    def flat_map(self, value: Any) -> Any:
        raise NotImplementedError


class FilterFunction(Function):
    def filter(self, value: Any) -> bool:
        raise NotImplementedError


class ReduceFunction(Function):
    def reduce(self, value1: Any, value2: Any) -> Any:
        raise NotImplementedError


class KeySelector(Function):
    def get_key(self, value: Any) -> Any:
        raise NotImplementedError


class ProcessFunction(Function):
    """``process_element(value, ctx)`` returns (or yields) the records to emit, as in PyFlink;
    or ``process_element(value, ctx, out)`` calls ``out.collect(v)``, as in Flink's Java API.
    ``ctx.output(tag, v)`` emits to a side output."""

    Context = Context

    def process_element(self, value: Any, ctx: Any) -> Any:
        raise NotImplementedError


class KeyedProcessFunction(ProcessFunction):
    """A ProcessFunction on a keyed stream: per-key state and timers (``on_timer``)."""

    Context = Context
    OnTimerContext = OnTimerContext

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        """Called when a timer registered through ``ctx.timer_service()`` fires; returns (or
        yields) records, or takes an ``out`` after ``ctx``, like ``process_element``."""


class CoMapFunction(Function):
    def map1(self, value: Any) -> Any:
        raise NotImplementedError

    def map2(self, value: Any) -> Any:
        raise NotImplementedError


class CoFlatMapFunction(Function):
    def flat_map1(self, value: Any) -> Any:
        raise NotImplementedError

    def flat_map2(self, value: Any) -> Any:
        raise NotImplementedError


class CoProcessFunction(Function):
    """``process_element1/2(value, ctx)`` per input, returning (or yielding) records, or
    taking an ``out`` after ``ctx``."""

    Context = Context

    def process_element1(self, value: Any, ctx: Any) -> Any:
        raise NotImplementedError

    def process_element2(self, value: Any, ctx: Any) -> Any:
        raise NotImplementedError


class KeyedCoProcessFunction(CoProcessFunction):
    """A CoProcessFunction of two keyed inputs: per-key state and timers (``on_timer``)."""

    Context = Context
    OnTimerContext = OnTimerContext

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        """Called when a timer registered through ``ctx.timer_service()`` fires."""


class AggregateFunction(Function):
    """Incremental window aggregation: an accumulator per window."""

    def create_accumulator(self) -> Any:
        raise NotImplementedError

    def add(self, value: Any, accumulator: Any) -> Any:
        raise NotImplementedError

    def get_result(self, accumulator: Any) -> Any:
        raise NotImplementedError

    def merge(self, a: Any, b: Any) -> Any:
        raise NotImplementedError


class WindowContext(Generic[W]):
    """``context`` of a window function: ``window()``, ``current_watermark()``,
    ``current_processing_time()``, ``window_state()`` (state of the key and window) and
    ``global_state()`` (state of the key). Subscriptable as PyFlink's
    (``ProcessWindowFunction.Context[TimeWindow]``) for type hints."""


class ProcessWindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """``process(key, context, elements)`` returns (or yields) the records of one window
    firing, or takes an ``out`` after ``elements``. Subscript it as in PyFlink:
    ``ProcessWindowFunction[tuple, tuple, str, TimeWindow]``."""

    Context = WindowContext

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        raise NotImplementedError

    def clear(self, context: Any) -> None:
        """The window is gone (Flink's cleanup time): drop its ``window_state()`` here."""
        return None


class ProcessAllWindowFunction(Function, Generic[IN, OUT, W]):
    """``window_all``'s ProcessWindowFunction: ``process(context, elements)``; ``clear(context)``
    runs when a window is gone (to drop its ``window_state()``)."""

    Context = WindowContext

    def process(self, context: Any, elements: Any) -> Any:
        raise NotImplementedError

    def clear(self, context: Any) -> None:
        return None


class AllWindowFunction(Function, Generic[IN, OUT, W]):
    """``window_all``'s WindowFunction: ``apply(window, inputs)`` returns (or yields) the
    records of one window firing, or takes an ``out`` after ``inputs``."""

    def apply(self, window: Any, inputs: Any) -> Any:
        raise NotImplementedError


class WindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """``apply(key, window, inputs)`` returns (or yields) the records of one window firing."""

    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        raise NotImplementedError


class SinkFunction(Function):
    """``invoke(value, context)`` once per record."""

    def invoke(self, value: Any, context: Any) -> None:
        raise NotImplementedError


class Partitioner(Function):
    """``partition(key, num_partitions)`` picks the channel of a custom partitioning."""

    def partition(self, key: Any, num_partitions: int) -> int:
        raise NotImplementedError


def takes_collector(function: Any, arguments: int) -> bool:
    """Whether ``function`` takes an ``out`` collector after its ``arguments`` (Flink's Java
    style: ``process_element(value, ctx, out)``) instead of returning or yielding its records
    (PyFlink's: ``process_element(value, ctx)``). A signature that cannot tell (``*args``,
    a builtin) keeps the collector, flowmagic's first style."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return True
    if any(parameter.kind is inspect.Parameter.VAR_POSITIONAL for parameter in parameters):
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(parameter.kind in positional for parameter in parameters) > arguments
