"""Helpers about user functions and side-output tags."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flowmagic.errors import ProgramError

__all__ = [
    "AggregateFunction",
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
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "SinkFunction",
    "WindowFunction",
    "function_name",
]


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
    """``process_element(value, ctx, out)``; ``ctx.output(tag, v)`` for side outputs."""

    def process_element(self, value: Any, ctx: Any, out: Any) -> None:
        raise NotImplementedError


class KeyedProcessFunction(ProcessFunction):
    """A ProcessFunction on a keyed stream: per-key state and timers (``on_timer``)."""

    def on_timer(self, timestamp: int, ctx: Any, out: Any) -> None:
        """Called when a timer registered through ``ctx.timer_service()`` fires."""


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
    def process_element1(self, value: Any, ctx: Any, out: Any) -> None:
        raise NotImplementedError

    def process_element2(self, value: Any, ctx: Any, out: Any) -> None:
        raise NotImplementedError


class KeyedCoProcessFunction(CoProcessFunction):
    def on_timer(self, timestamp: int, ctx: Any, out: Any) -> None:
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


class ProcessWindowFunction(Function):
    """``process(key, context, elements)`` returns the records of one window firing."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        raise NotImplementedError


class WindowFunction(Function):
    """``apply(key, window, elements)`` returns the records of one window firing."""

    def apply(self, key: Any, window: Any, elements: Any) -> Any:
        raise NotImplementedError


class SinkFunction(Function):
    """``invoke(value, context)`` once per record."""

    def invoke(self, value: Any, context: Any) -> None:
        raise NotImplementedError


class Partitioner(Function):
    """``partition(key, num_partitions)`` picks the channel of a custom partitioning."""

    def partition(self, key: Any, num_partitions: int) -> int:
        raise NotImplementedError
