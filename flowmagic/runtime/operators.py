"""Runtime operators: what each operator kind does with records, watermarks and end of input.

An operator receives ``process(value, timestamp)`` (``side`` 1/2 for two-input ones),
``process_batch(values)`` for runs of records without timestamps (the fast path of
stateless operators), ``process_watermark(wm)`` and ``end_input()``, and emits through its
:class:`Output`. ``OPERATORS`` maps each :class:`~flowmagic.graph.operators.OperatorSpec`
kind to its class: a new operator kind is one class here plus its API method.
"""

from __future__ import annotations

import reprlib
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flowmagic.runtime.context import (
    KeyedStateBackend,
    ProcessContext,
    RuntimeContext,
    TimerService,
    adapt,
    emit_all,
)
from flowmagic.runtime.records import MAX_WATERMARK, MIN_WATERMARK

__all__ = ["OPERATORS", "Operator", "Output", "TaskInfo", "UserFunctionError", "register"]

_PACKAGE_DIR = str(Path(__file__).resolve().parent.parent)
_record_repr = reprlib.Repr()
_record_repr.maxstring = 80
_record_repr.maxother = 80


@dataclass(frozen=True)
class TaskInfo:
    """The subtask an operator runs in."""

    vertex_name: str
    index: int
    parallelism: int
    max_parallelism: int
    attempt: int
    batch: bool

    @property
    def subtask_name(self) -> str:
        return f"{self.vertex_name} ({self.index + 1}/{self.parallelism})"


class UserFunctionError(Exception):
    """A user function raised: carries plain-data details for the driver to show."""

    def __init__(self, details: dict[str, Any]):
        super().__init__(details["summary"])
        self.details = details


def user_traceback(error: BaseException) -> list[str]:
    """The traceback lines of the user's own frames (flowmagic's and the stdlib's dropped)."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith(_PACKAGE_DIR) and not frame.filename.startswith(sys.prefix)
    ]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(error), error)
    return [line.rstrip("\n") for line in lines]


class Output:
    """Where an operator's records go: chained operators, exchanges, side-output branches."""

    def __init__(self) -> None:
        self.targets: list[Callable[[Any, int | None], None]] = []
        self.batch_targets: list[Callable[[list[Any]], None]] = []
        self.side_targets: dict[str, list[Callable[[Any, int | None], None]]] = {}
        self.watermark_targets: list[Callable[[int], None]] = []
        self.collect: Callable[[Any, int | None], None] = self._fan_out
        self.collect_batch: Callable[[list[Any]], None] = self._fan_out_batch

    def seal(self) -> None:
        """Bind the fast single-target paths once all targets are known."""
        if len(self.targets) == 1:
            self.collect = self.targets[0]
        if len(self.batch_targets) == 1:
            self.collect_batch = self.batch_targets[0]

    def _fan_out(self, value: Any, timestamp: int | None) -> None:
        for target in self.targets:
            target(value, timestamp)

    def _fan_out_batch(self, values: list[Any]) -> None:
        for target in self.batch_targets:
            target(values)

    def side(self, tag: str, value: Any, timestamp: int | None) -> None:
        for target in self.side_targets.get(tag, ()):
            target(value, timestamp)

    def emit_watermark(self, watermark: int) -> None:
        for target in self.watermark_targets:
            target(watermark)


class Operator:
    """Base of runtime operators: stateless pass-through of watermarks."""

    keyed = False
    #: Sinks set this: the task then gives them ``emit_result(payload)`` for the driver.
    emits_results = False

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        self.name = name
        self.params = params
        self.task = task
        self.output = Output()
        self.backend = KeyedStateBackend() if self.keyed else None
        self.runtime_context = RuntimeContext(
            name, task.index, task.parallelism, task.max_parallelism, task.attempt, self.backend
        )
        self.records_in = 0

    def fail(self, error: BaseException, record: Any = None, *, has_record: bool = True) -> UserFunctionError:
        """Wrap a user function's exception with where it happened."""
        if isinstance(error, UserFunctionError):
            return error
        shown = _record_repr.repr(record) if has_record else None
        summary = (
            f"{type(error).__name__}: {error} -- in operator {self.name!r}, subtask {self.task.subtask_name}, "
            f"attempt {self.task.attempt}" + (f", record {shown}" if has_record else "")
        )
        return UserFunctionError(
            {
                "summary": summary,
                "operator": self.name,
                "subtask": self.task.subtask_name,
                "attempt": self.task.attempt,
                "record": shown,
                "exception": f"{type(error).__name__}: {error}",
                "traceback": user_traceback(error),
            }
        )

    def open_function(self, function: Any) -> None:
        opener = getattr(function, "open", None)
        if callable(opener) and not isinstance(function, type):
            try:
                opener(self.runtime_context)
            except Exception as error:
                raise self.fail(error, has_record=False) from error

    def close_function(self, function: Any) -> None:
        closer = getattr(function, "close", None)
        if callable(closer) and not isinstance(function, type):
            try:
                closer()
            except Exception as error:
                raise self.fail(error, has_record=False) from error

    def open(self) -> None:
        """Called before the first record."""

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        raise NotImplementedError

    def process_batch(self, values: list[Any]) -> None:
        """Records without timestamps; operators with a faster loop override this."""
        process = self.process
        for value in values:
            process(value, None)

    def process_watermark(self, watermark: int) -> None:
        self.output.emit_watermark(watermark)

    def end_input(self) -> None:
        """All input has arrived (after the final watermark)."""

    def close(self) -> None:
        """Called after end of input, to release resources."""


OPERATORS: dict[str, type[Operator]] = {}


def register(*kinds: str) -> Callable[[type[Operator]], type[Operator]]:
    """Class decorator: the runtime implementation of these operator kinds."""

    def decorate(cls: type[Operator]) -> type[Operator]:
        for kind in kinds:
            OPERATORS[kind] = cls
        return cls

    return decorate


class _FunctionOperator(Operator):
    method = ""

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        self.user_function = params["function"]
        self.function = adapt(self.user_function, self.method)

    def open(self) -> None:
        self.open_function(self.user_function)

    def close(self) -> None:
        self.close_function(self.user_function)


@register("map")
class MapOperator(_FunctionOperator):
    method = "map"

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            result = self.function(value)
        except Exception as error:
            raise self.fail(error, value) from error
        self.output.collect(result, timestamp)

    def process_batch(self, values: list[Any]) -> None:
        function = self.function
        try:
            results = [function(value) for value in values]
        except Exception as error:
            raise self._locate(error, values) from error
        self.output.collect_batch(results)

    def _locate(self, error: Exception, values: list[Any]) -> UserFunctionError:
        # The list comprehension lost which record failed; find it again for the message.
        for value in values:
            try:
                self.function(value)
            except Exception:
                return self.fail(error, value)
        return self.fail(error, has_record=False)


@register("flat_map")
class FlatMapOperator(MapOperator):
    method = "flat_map"

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        collect = self.output.collect
        try:
            for result in self.function(value) or ():
                collect(result, timestamp)
        except Exception as error:
            raise self.fail(error, value) from error

    def process_batch(self, values: list[Any]) -> None:
        function = self.function
        try:
            results = [result for value in values for result in function(value) or ()]
        except Exception as error:
            raise self._locate(error, values) from error
        self.output.collect_batch(results)

    def _locate(self, error: Exception, values: list[Any]) -> UserFunctionError:
        for value in values:
            try:
                list(self.function(value) or ())
            except Exception:
                return self.fail(error, value)
        return self.fail(error, has_record=False)


@register("filter")
class FilterOperator(MapOperator):
    method = "filter"

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            keep = self.function(value)
        except Exception as error:
            raise self.fail(error, value) from error
        if keep:
            self.output.collect(value, timestamp)

    def process_batch(self, values: list[Any]) -> None:
        function = self.function
        try:
            kept = [value for value in values if function(value)]
        except Exception as error:
            raise self._locate(error, values) from error
        self.output.collect_batch(kept)


class _Collector:
    """The ``out`` of process functions: ``out.collect(v)`` keeps the current timestamp."""

    __slots__ = ("_collect", "_context")

    def __init__(self, collect: Callable[[Any, int | None], None], context: ProcessContext):
        self._collect = collect
        self._context = context

    def collect(self, value: Any) -> None:
        self._collect(value, self._context.current_timestamp)


@register("process", "keyed_process")
class ProcessOperator(_FunctionOperator):
    """``process(value, ctx, out)``; on keyed streams with state, timers and ``on_timer``."""

    method = "process_element"

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        self.keyed = "key_selector" in params
        super().__init__(name, params, task)
        self.key_selector = params.get("key_selector")
        self.timers = TimerService(self.backend) if self.keyed else None
        self.context = ProcessContext(self._side, self.timers, self.backend)
        self.on_timer = getattr(self.user_function, "on_timer", None)

    def _side(self, tag: str, value: Any, timestamp: int | None) -> None:
        self.output.side(tag, value, timestamp)

    def _out(self) -> _Collector:
        return _Collector(self.output.collect, self.context)

    def open(self) -> None:
        super().open()
        self.out = self._out()

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        context = self.context
        context.current_timestamp = timestamp
        try:
            if self.key_selector is not None:
                self.backend.current_key = self.key_selector(value)
            emit_all(self.function(value, context, self.out), self.out.collect)
        except Exception as error:
            raise self.fail(error, value) from error
        if self.timers is not None and self.timers._processing:
            self._fire_processing_timers(self.timers.current_processing_time())

    def _fire(self, timestamp: int, key: Any) -> None:
        if self.on_timer is None:
            return
        self.backend.current_key = key
        self.context.current_timestamp = timestamp
        try:
            emit_all(self.on_timer(timestamp, self.context, self.out), self.out.collect)
        except Exception as error:
            raise self.fail(error, f"timer {timestamp} of key {key!r}") from error

    def _fire_processing_timers(self, now: int) -> None:
        for timestamp, key in self.timers.due_processing_timers(now):
            self._fire(timestamp, key)

    def process_watermark(self, watermark: int) -> None:
        if self.timers is not None:
            self.timers.current_watermark_value = watermark
            for timestamp, key in self.timers.due_event_timers(watermark):
                self._fire(timestamp, key)
        self.output.emit_watermark(watermark)

    def end_input(self) -> None:
        # The clock of a bounded job jumps to the end: pending processing-time timers fire.
        if self.timers is not None:
            self._fire_processing_timers(MAX_WATERMARK)


def field_of(value: Any, position: int | str) -> Any:
    """Field ``position`` of a record: tuple/list index, dict key, or the value itself at 0."""
    if isinstance(position, str):
        return value[position]
    if isinstance(value, (tuple, list)):
        return value[position]
    if position != 0:
        raise IndexError(f"field {position} of a scalar record {value!r}; only position 0 exists")
    return value


def with_field(value: Any, position: int | str, new: Any) -> Any:
    """A copy of ``value`` with field ``position`` replaced."""
    if isinstance(position, str):
        copy = dict(value)
        copy[position] = new
        return copy
    if isinstance(value, tuple):
        return (*value[:position], new, *value[position + 1 :])
    if isinstance(value, list):
        copy = list(value)
        copy[position] = new
        return copy
    return new


def aggregation_function(aggregation: str, position: int | str) -> Callable[[Any, Any], Any]:
    """Flink's SumAggregator / ComparableAggregator as a reduce function ``(acc, value)``."""
    if aggregation == "sum":
        return lambda acc, value: with_field(acc, position, field_of(acc, position) + field_of(value, position))
    if aggregation == "min":
        return lambda acc, value: (
            with_field(acc, position, field_of(value, position))
            if field_of(value, position) < field_of(acc, position)
            else acc
        )
    if aggregation == "max":
        return lambda acc, value: (
            with_field(acc, position, field_of(value, position))
            if field_of(value, position) > field_of(acc, position)
            else acc
        )
    if aggregation == "min_by":
        return lambda acc, value: value if field_of(value, position) < field_of(acc, position) else acc
    if aggregation == "max_by":
        return lambda acc, value: value if field_of(value, position) > field_of(acc, position) else acc
    raise ValueError(f"unknown aggregation {aggregation!r}")


def reduce_function_of(params: dict[str, Any]) -> Callable[[Any, Any], Any]:
    """The ``(accumulated, value) -> accumulated`` function of a keyed reduce or aggregation."""
    if "aggregation" in params:
        return aggregation_function(params["aggregation"], params["position"])
    return adapt(params["function"], "reduce")


@register("keyed_reduce", "keyed_aggregation")
class KeyedReduceOperator(Operator):
    """Rolling reduce per key: STREAMING emits every update, BATCH only the final value."""

    keyed = True

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        self.key_selector = params["key_selector"]
        self.reduce = reduce_function_of(params)
        self.user_function = params.get("function")
        self.values: dict[Any, Any] = {}
        self.timestamps: dict[Any, int | None] = {}

    def open(self) -> None:
        if self.user_function is not None:
            self.open_function(self.user_function)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        values = self.values
        try:
            key = self.key_selector(value)
            if key in values:
                value = self.reduce(values[key], value)
        except Exception as error:
            raise self.fail(error, value) from error
        values[key] = value
        if self.task.batch:
            self.timestamps[key] = timestamp
        else:
            self.output.collect(value, timestamp)

    def process_batch(self, values: list[Any]) -> None:
        if not self.task.batch:
            super().process_batch(values)
            return
        state, key_selector, reduce = self.values, self.key_selector, self.reduce
        try:
            for value in values:
                key = key_selector(value)
                state[key] = reduce(state[key], value) if key in state else value
        except Exception as error:
            raise self.fail(error, value) from error

    def end_input(self) -> None:
        if self.task.batch:
            collect = self.output.collect
            for key, value in self.values.items():
                collect(value, self.timestamps.get(key))

    def close(self) -> None:
        if self.user_function is not None:
            self.close_function(self.user_function)


@register("timestamps_watermarks")
class TimestampsAndWatermarksOperator(Operator):
    """Assigns event timestamps; emits a watermark after every record that advances it."""

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        strategy = params["strategy"]
        self.assigner = adapt(strategy.timestamp_assigner, "extract_timestamp") if strategy.timestamp_assigner else None
        # BATCH ignores watermarks until the end of input, so none are generated.
        self.lag = None if task.batch else strategy.out_of_orderness_ms
        self.max_timestamp = MIN_WATERMARK
        self.current = MIN_WATERMARK

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        if self.assigner is not None:
            try:
                timestamp = int(self.assigner(value, MIN_WATERMARK if timestamp is None else timestamp))
            except Exception as error:
                raise self.fail(error, value) from error
        self.output.collect(value, timestamp)
        if self.lag is not None and timestamp is not None and timestamp > self.max_timestamp:
            self.max_timestamp = timestamp
            watermark = timestamp - self.lag - 1
            if watermark > self.current:
                self.current = watermark
                self.output.emit_watermark(watermark)

    def process_watermark(self, watermark: int) -> None:
        # Like Flink's TimestampsAndWatermarksOperator: upstream watermarks are replaced by
        # this operator's own, except the end-of-input one.
        if watermark == MAX_WATERMARK and self.current != MAX_WATERMARK:
            self.current = MAX_WATERMARK
            self.output.emit_watermark(watermark)


class _TwoInputOperator(Operator):
    """Two-input operators: one function per input side (1 and 2)."""

    methods = ("", "")

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        first, second = params["functions"]
        self.functions = (None, first, second)


@register("co_map")
class CoMapOperator(_TwoInputOperator):
    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            result = self.functions[side](value)
        except Exception as error:
            raise self.fail(error, value) from error
        self.output.collect(result, timestamp)


@register("co_flat_map")
class CoFlatMapOperator(_TwoInputOperator):
    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        collect = self.output.collect
        try:
            for result in self.functions[side](value) or ():
                collect(result, timestamp)
        except Exception as error:
            raise self.fail(error, value) from error


@register("co_process", "co_keyed_process")
class CoProcessOperator(ProcessOperator):
    """``process_element1/2(value, ctx, out)``; keyed when both inputs are keyed."""

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        first, second = params["functions"]
        params = {**params, "function": first}
        if "key_selectors" in params:
            params["key_selector"] = params["key_selectors"][0]
        super().__init__(name, params, task)
        self.functions = (None, first, second)
        self.key_selectors = params.get("key_selectors", (None, None))
        owner = getattr(first, "__self__", None)
        self.on_timer = getattr(owner, "on_timer", None) if owner is not None else None

    def open(self) -> None:
        owner = getattr(self.functions[1], "__self__", None)
        if owner is not None:
            self.open_function(owner)
        self.out = self._out()

    def close(self) -> None:
        owner = getattr(self.functions[1], "__self__", None)
        if owner is not None:
            self.close_function(owner)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        context = self.context
        context.current_timestamp = timestamp
        try:
            selector = self.key_selectors[side - 1]
            if selector is not None:
                self.backend.current_key = selector(value)
            emit_all(self.functions[side](value, context, self.out), self.out.collect)
        except Exception as error:
            raise self.fail(error, value) from error
