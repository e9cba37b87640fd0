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
from collections.abc import Callable, Iterable
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
    text = "".join(traceback.format_list(frames) + traceback.format_exception_only(type(error), error))
    return text.rstrip("\n").split("\n")


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
        # As in Flink, a function's task is the whole chain (the vertex), not its operator.
        self.runtime_context = RuntimeContext(
            task.vertex_name, task.index, task.parallelism, task.max_parallelism, task.attempt, self.backend
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

    def process_batch_in_steps(self, values: list[Any]) -> Iterable[None]:
        """:meth:`process_batch`, pausing (yielding) where the task may hand on the output
        so far: an operator that makes many batches of one record (a split reader) pauses
        after each of them."""
        self.process_batch(values)
        return ()

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
    """``function(value)`` per record. Flat map and filter differ only in :meth:`apply` and
    :meth:`apply_all`: what one record, and what a batch of records, turns into."""

    method = "map"

    def apply(self, value: Any) -> list[Any]:
        return [self.function(value)]

    def apply_all(self, values: list[Any]) -> list[Any]:
        function = self.function
        return [function(value) for value in values]

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            results = self.apply(value)
        except Exception as error:
            raise self.fail(error, value) from error
        collect = self.output.collect
        for result in results:
            collect(result, timestamp)

    def process_batch(self, values: list[Any]) -> None:
        try:
            results = self.apply_all(values)
        except Exception as error:
            raise self._locate(error, values) from error
        self.output.collect_batch(results)

    def _locate(self, error: Exception, values: list[Any]) -> UserFunctionError:
        # The batch lost which record failed; find it again for the message.
        for value in values:
            try:
                self.apply(value)
            except Exception:
                return self.fail(error, value)
        return self.fail(error, has_record=False)


@register("flat_map")
class FlatMapOperator(MapOperator):
    method = "flat_map"

    def apply(self, value: Any) -> list[Any]:
        return list(self.function(value) or ())

    def apply_all(self, values: list[Any]) -> list[Any]:
        function = self.function
        return [result for value in values for result in function(value) or ()]


@register("filter")
class FilterOperator(MapOperator):
    method = "filter"

    def apply(self, value: Any) -> list[Any]:
        return [value] if self.function(value) else []

    def apply_all(self, values: list[Any]) -> list[Any]:
        function = self.function
        return [value for value in values if function(value)]


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
        # Non-keyed functions may read the time; registering timers needs a key (Flink's rule).
        self.timers = TimerService(self.backend)
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
        if self.timers._processing:
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
        self.timers.current_watermark_value = watermark
        for timestamp, key in self.timers.due_event_timers(watermark):
            self._fire(timestamp, key)
        self.output.emit_watermark(watermark)

    def end_input(self) -> None:
        # The clock of a bounded job jumps to the end: pending processing-time timers fire.
        self._fire_processing_timers(MAX_WATERMARK)


def field_of(value: Any, position: int | str) -> Any:
    """Field ``position`` of a record: tuple/list index, dict key, or the value itself at 0."""
    if isinstance(value, (tuple, list, dict)):
        return value[position]
    if position != 0:
        raise IndexError(f"field {position} of a scalar record {value!r}; only position 0 exists")
    return value


def with_field(value: Any, position: int | str, new: Any) -> Any:
    """A copy of ``value`` with field ``position`` replaced."""
    if isinstance(value, tuple):
        return (*value[:position], new, *value[position + 1 :])
    if isinstance(value, (list, dict)):
        copy = value.copy()
        copy[position] = new
        return copy
    return new


def aggregation_function(aggregation: str, position: int | str) -> Callable[[Any, Any], Any]:
    """Flink's SumAggregator / ComparableAggregator as a reduce function ``(acc, value)``."""
    folder = _Aggregation(aggregation, position)

    def reduce(accumulated: Any, value: Any) -> Any:
        return folder.record(folder.combine(folder.start(accumulated), value))

    return reduce


class _Aggregation:
    """sum/min/max keep the key's first record and fold one field; min_by/max_by keep a record.

    State is ``[first record, folded field]`` or, for the ``_by`` kinds, the record itself,
    so folding never copies a record (the hot loop of keyed aggregations).
    """

    def __init__(self, aggregation: str, position: int | str):
        if aggregation not in ("sum", "min", "max", "min_by", "max_by"):
            raise ValueError(f"unknown aggregation {aggregation!r}")
        self.aggregation = aggregation
        self.position = position
        self.by = aggregation.endswith("_by")

    def start(self, value: Any) -> Any:
        return value if self.by else [value, field_of(value, self.position)]

    def combine(self, state: Any, value: Any) -> Any:
        field = field_of(value, self.position)
        aggregation = self.aggregation
        if aggregation == "sum":
            state[1] += field
        elif aggregation == "min":
            if field < state[1]:
                state[1] = field
        elif aggregation == "max":
            if field > state[1]:
                state[1] = field
        elif aggregation == "min_by":
            if field < field_of(state, self.position):
                return value
        elif field > field_of(state, self.position):
            return value
        return state

    def record(self, state: Any) -> Any:
        return state if self.by else with_field(state[0], self.position, state[1])


class KeyedFolder:
    """Per-key rolling state of a keyed reduce or aggregation (see :func:`keyed_folder`).

    Subclasses define :meth:`fold` and :meth:`results`; the batch methods fold value by
    value unless a subclass has a faster loop.
    """

    def __init__(self, params: dict[str, Any]):
        self.key_of = adapt(params["key_selector"], "get_key")

    def fold(self, value: Any) -> Any:
        """Fold ``value`` into its key's state; return the key's current result."""
        raise NotImplementedError

    def fold_batch(self, values: list[Any]) -> None:
        """Fold every value (BATCH: only the final results are wanted)."""
        fold = self.fold
        value = None
        try:
            for value in values:
                fold(value)
        except Exception as error:
            raise FoldError(value) from error

    def fold_all(self, values: list[Any]) -> list[Any]:
        """Fold every value; return the key's result after each one (STREAMING updates)."""
        fold = self.fold
        results = []
        value = None
        try:
            for value in values:
                results.append(fold(value))
        except Exception as error:
            raise FoldError(value) from error
        return results

    def results(self) -> list[Any]:
        """Every key's result, keys in the order they first came."""
        raise NotImplementedError


class ReduceFolder(KeyedFolder):
    """A reduce function, or min/max/min_by/max_by: one state per key."""

    def __init__(self, params: dict[str, Any]):
        super().__init__(params)
        self.states: dict[Any, Any] = {}
        if "aggregation" in params:
            aggregation = _Aggregation(params["aggregation"], params["position"])
            self.start, self.combine, self.record = aggregation.start, aggregation.combine, aggregation.record
        else:
            reduce = adapt(params["function"], "reduce")
            self.start = self.record = _identity
            self.combine = reduce

    def fold(self, value: Any) -> Any:
        key = self.key_of(value)
        states = self.states
        state = states.get(key, _MISSING)
        state = self.start(value) if state is _MISSING else self.combine(state, value)
        states[key] = state
        return self.record(state)

    def fold_batch(self, values: list[Any]) -> None:
        # Without fold()'s record(state) per value: BATCH only wants the final results.
        key_of, states, start, combine = self.key_of, self.states, self.start, self.combine
        value = None
        try:
            for value in values:
                key = key_of(value)
                state = states.get(key, _MISSING)
                states[key] = start(value) if state is _MISSING else combine(state, value)
        except Exception as error:
            raise FoldError(value) from error

    def results(self) -> list[Any]:
        record = self.record
        return [record(state) for state in self.states.values()]


class SumFolder(KeyedFolder):
    """``sum(position)`` in BATCH: the key's first record and its running total, in two dicts.

    The hot loop of a WordCount is then one lookup, one store and one addition per record,
    with no per-key state object to reach through.
    """

    def __init__(self, params: dict[str, Any]):
        super().__init__(params)
        self.position = params["position"]
        self.totals: dict[Any, Any] = {}
        self.firsts: dict[Any, Any] = {}

    def fold(self, value: Any) -> Any:
        key = self.key_of(value)
        field = field_of(value, self.position)
        total = self.totals.get(key, _MISSING)
        if total is _MISSING:
            self.firsts[key] = value
            total = field
        else:
            total = total + field
        self.totals[key] = total
        return with_field(self.firsts[key], self.position, total)

    def fold_batch(self, values: list[Any]) -> None:
        if not values or not isinstance(values[0], (tuple, list, dict)):
            super().fold_batch(values)
            return
        key_of, totals, firsts, position = self.key_of, self.totals, self.firsts, self.position
        value = None
        try:
            for value in values:
                key = key_of(value)
                total = totals.get(key, _MISSING)
                if total is _MISSING:
                    firsts[key] = value
                    totals[key] = value[position]
                else:
                    totals[key] = total + value[position]
        except Exception as error:
            raise FoldError(value) from error

    def results(self) -> list[Any]:
        firsts, position = self.firsts, self.position
        return [with_field(firsts[key], position, total) for key, total in self.totals.items()]


class SumUpdater(KeyedFolder):
    """``sum(position)`` in STREAMING: as in Flink, a key's state is its latest result, the
    first record with the running total in its field, and each record makes the next one."""

    def __init__(self, params: dict[str, Any]):
        super().__init__(params)
        self.position = params["position"]
        self.latest: dict[Any, Any] = {}

    def fold(self, value: Any) -> Any:
        key = self.key_of(value)
        previous = self.latest.get(key, _MISSING)
        if previous is not _MISSING:
            position = self.position
            value = with_field(previous, position, field_of(previous, position) + field_of(value, position))
        self.latest[key] = value
        return value

    def fold_all(self, values: list[Any]) -> list[Any]:
        position = self.position
        if not values or not isinstance(values[0], tuple) or not isinstance(position, int):
            return super().fold_all(values)
        key_of, latest, get = self.key_of, self.latest, self.latest.get
        after = position + 1
        # Pairs summing their second field (Tuple2 word counts) get a record built directly.
        pairs = position == 1
        results = []
        append = results.append
        value = None
        try:
            for value in values:
                key = key_of(value)
                previous = get(key)  # a tuple, never None, once the key has a record
                if previous is None:
                    latest[key] = value
                    append(value)
                else:
                    total = previous[position] + value[position]
                    if pairs and len(previous) == 2:
                        record = latest[key] = (previous[0], total)
                    else:
                        record = latest[key] = (*previous[:position], total, *previous[after:])
                    append(record)
        except Exception as error:
            raise FoldError(value) from error
        return results

    def results(self) -> list[Any]:
        return list(self.latest.values())


def keyed_folder(params: dict[str, Any], updates: bool) -> KeyedFolder:
    """The folder of a keyed reduce or aggregation operator's ``params``; ``updates`` when
    every record's new result is wanted (STREAMING), not only the final ones (BATCH)."""
    if params.get("aggregation") != "sum":
        return ReduceFolder(params)
    return SumUpdater(params) if updates else SumFolder(params)


_MISSING = object()


class FoldError(Exception):
    """Carries the record a fold failed on (its cause is the user's exception)."""

    def __init__(self, record: Any):
        super().__init__("fold failed")
        self.record = record


def _identity(value: Any) -> Any:
    return value


@register("keyed_reduce", "keyed_aggregation")
class KeyedReduceOperator(Operator):
    """Rolling reduce per key: STREAMING emits every update, BATCH only the final value."""

    keyed = True

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        self.folder = keyed_folder(params, updates=not task.batch)
        self.user_function = params.get("function")

    def open(self) -> None:
        if self.user_function is not None:
            self.open_function(self.user_function)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            result = self.folder.fold(value)
        except Exception as error:
            raise self.fail(error, value) from error
        if not self.task.batch:
            self.output.collect(result, timestamp)

    def process_batch(self, values: list[Any]) -> None:
        try:
            if self.task.batch:
                self.folder.fold_batch(values)
                return
            results = self.folder.fold_all(values)
        except FoldError as wrapped:
            raise self.fail(wrapped.__cause__, wrapped.record) from wrapped.__cause__
        self.output.collect_batch(results)

    def end_input(self) -> None:
        if self.task.batch:
            self.output.collect_batch(self.folder.results())

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
