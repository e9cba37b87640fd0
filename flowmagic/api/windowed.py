"""WindowedStream (keyed windows) and AllWindowedStream (``window_all``).

A window operator is named after its assigner's class (``TumblingEventTimeWindows``) and
described like Flink's ``WindowOperatorBuilder``:
``Window(<assigner>, <Trigger>, [<Evictor>, ]<function>[, <window function>])``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmagic.api.arguments import check_assigner, check_callable, check_count, check_time_spans
from flowmagic.api.datastream import DataStream, KeyedStream, call_location_name, call_site
from flowmagic.errors import ProgramError
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.graph.partitioners import HASH, Partitioner
from flowmagic.graph.transformations import (
    OneInputTransformation,
    PartitionTransformation,
)
from flowmagic.vocabulary.functions import OutputTag, function_name
from flowmagic.vocabulary.time import Duration, to_millis
from flowmagic.vocabulary.types import TypeInformation, check_type_info
from flowmagic.vocabulary.windows import (
    CountEvictor,
    CountSlidingWindowAssigner,
    CountTrigger,
    CountTumblingWindowAssigner,
    Evictor,
    GlobalWindows,
    PurgingTrigger,
    Trigger,
    WindowAssigner,
)

__all__ = ["AllWindowedStream", "WindowedStream"]

_PASS_THROUGH = "PassThroughWindowFunction"
_AGGREGATOR_CLASS = {
    "sum": "SumAggregator",
    "min": "ComparableAggregator",
    "max": "ComparableAggregator",
    "min_by": "ComparableAggregator",
    "max_by": "ComparableAggregator",
}


class _Windowed:
    """What keyed and non-keyed windowed streams share: trigger, evictor, lateness, functions."""

    def __init__(self, input_stream: DataStream, assigner: WindowAssigner):
        self._input = input_stream
        self._assigner = check_assigner(assigner)
        check_time_spans(assigner, input_stream)
        self._trigger: Trigger = assigner.default_trigger()
        self._evictor: Evictor | None = None
        self._allowed_lateness = 0
        self._late_tag: OutputTag | None = None

    def trigger(self, trigger: Trigger):
        """Replace the assigner's default trigger."""
        if not isinstance(trigger, Trigger):
            raise ProgramError(f"trigger() expects a Trigger, got {trigger!r}.")
        if self._assigner.is_merging and not trigger.can_merge():
            raise ProgramError("A merging window assigner cannot be used with a trigger that does not support merging.")
        check_time_spans(trigger, self._input)
        self._trigger = trigger
        return self

    def evictor(self, evictor: Evictor):
        """Evict elements of a window before (or, with ``do_evict_after``, after) the window
        function runs: ``CountEvictor.of(n)``, ``TimeEvictor.of(Time.seconds(10))``."""
        if not isinstance(evictor, Evictor):
            raise ProgramError(f"evictor() expects an evictor such as CountEvictor.of(n), got {evictor!r}.")
        check_time_spans(evictor, self._input)
        self._evictor = evictor
        return self

    def allowed_lateness(self, lateness: Duration | int):
        """Keep windows for ``lateness`` after the watermark passed their end (event time)."""
        millis = to_millis(lateness, "allowed lateness")
        if millis < 0:
            raise ProgramError("The allowed lateness cannot be negative.")
        if millis and not self._assigner.is_event_time:
            raise ProgramError("Setting an allowed lateness is only valid for event-time windows.")
        self._allowed_lateness = millis
        return self

    def side_output_late_data(self, tag: OutputTag):
        """Emit records that arrive after their window closed to the side output ``tag``."""
        if not isinstance(tag, OutputTag):
            raise ProgramError(f"side_output_late_data() expects an OutputTag, got {tag!r}.")
        self._late_tag = tag
        return self

    def _description(self, functions: list[str]) -> str:
        parts = [str(self._assigner), self._trigger.class_name]
        if self._evictor is not None:
            parts.append(self._evictor.class_name)
        return f"Window({', '.join(parts + functions)})"

    def _params(self, kind: str, **params: Any) -> dict[str, Any]:
        """The window operator's parameters but its key selector, which :meth:`_build` adds."""
        return {
            "function_kind": kind,
            "assigner": self._assigner,
            "trigger": self._trigger,
            "evictor": self._evictor,
            "allowed_lateness": self._allowed_lateness,
            "late_tag": self._late_tag.tag_id if self._late_tag else None,
            "stamps_firing_time": self._input.get_execution_environment().dialect.python_windows,
            **params,
        }

    def _build(self, params: dict[str, Any], functions: list[str], output_type: TypeInformation | None) -> DataStream:
        raise NotImplementedError

    # -- window functions -----------------------------------------------------------------

    def reduce(
        self,
        function: Callable[[Any, Any], Any],
        window_function: Any = None,
        output_type: TypeInformation | None = None,
    ) -> DataStream:
        """Incrementally reduce each window.

        ``window_function`` may post-process the result: a ProcessWindowFunction (or a plain
        function) ``process(key, context, [result])`` or a WindowFunction
        ``apply(key, window, [result])``, returning the records to emit. ``output_type``
        declares the type of what the window function emits (the input's type without one).
        """
        check_callable(function, "reduce()", "reduce")
        names = [function_name(function), function_name(window_function) if window_function else self._pass_through]
        if window_function is None:
            output_type = self._input.get_type()
        params = self._params("reduce", function=function, window_function=window_function)
        return self._build(params, names, output_type)

    def aggregate(
        self,
        function: Any,
        window_function: Any = None,
        accumulator_type: TypeInformation | None = None,
        output_type: TypeInformation | None = None,
    ) -> DataStream:
        """Aggregate with an object having ``create_accumulator/add/get_result`` (and ``merge``);
        ``window_function`` as in :meth:`reduce`; ``accumulator_type`` is accepted as PyFlink's."""
        check_type_info(accumulator_type, "aggregate() accumulator_type")
        for method in ("create_accumulator", "add", "get_result"):
            if not hasattr(function, method):
                raise ProgramError(f"aggregate() expects an AggregateFunction with {method}(), got {function!r}.")
        names = [function_name(function), function_name(window_function) if window_function else self._pass_through]
        params = self._params("aggregate", function=function, window_function=window_function)
        return self._build(params, names, output_type)

    def process(self, function: Any, output_type: TypeInformation | None = None) -> DataStream:
        """Call ``function.process(key, context, elements)`` once per window firing; it returns
        (or yields) the records to emit, or takes a fourth argument ``out`` and calls
        ``out.collect(v)``. ``context.window()`` is the window."""
        check_callable(function, "process()", "process")
        return self._build(self._params("process", function=function), [function_name(function)], output_type)

    def apply(self, function: Any, output_type: TypeInformation | None = None) -> DataStream:
        """Call ``function.apply(key, window, inputs)`` once per window firing; it returns (or
        yields) the records to emit, or takes a fourth argument ``out``."""
        check_callable(function, "apply()", "apply")
        return self._build(self._params("apply", function=function), [function_name(function)], output_type)

    def _aggregation(self, aggregation: str, position: int | str) -> DataStream:
        if isinstance(position, bool) or not isinstance(position, (int, str)):
            raise ProgramError(f"{aggregation}() expects a field position (int) or name (str), got {position!r}.")
        params = self._params("aggregation", aggregation=aggregation, position=position)
        return self._build(params, [_AGGREGATOR_CLASS[aggregation], self._pass_through], self._input.get_type())

    def sum(self, position: int | str = 0) -> DataStream:
        """Sum of field ``position`` per window."""
        return self._aggregation("sum", position)

    def min(self, position: int | str = 0) -> DataStream:
        """Minimum of field ``position`` per window (other fields from the first record)."""
        return self._aggregation("min", position)

    def max(self, position: int | str = 0) -> DataStream:
        """Maximum of field ``position`` per window (other fields from the first record)."""
        return self._aggregation("max", position)

    def min_by(self, position: int | str = 0) -> DataStream:
        """The record with the smallest field ``position`` per window."""
        return self._aggregation("min_by", position)

    def max_by(self, position: int | str = 0) -> DataStream:
        """The record with the largest field ``position`` per window."""
        return self._aggregation("max_by", position)

    _pass_through = _PASS_THROUGH


class WindowedStream(_Windowed):
    """A keyed stream grouped into windows (``key_by(...).window(...)``)."""

    def __init__(self, keyed: KeyedStream, assigner: WindowAssigner):
        if not isinstance(keyed, KeyedStream):
            raise ProgramError("window() needs a keyed stream; use window_all() on a non-keyed stream.")
        super().__init__(keyed, assigner)

    @classmethod
    def count(cls, keyed: KeyedStream, size: int, slide: int | None = None) -> WindowedStream:
        """``count_window``: in a PyFlink program, PyFlink's count window assigners (each
        window fires once, holding ``size`` elements; ``slide`` 0 or None: tumbling); else
        Java's GlobalWindows with a (purging) count trigger, or count evictor + trigger."""
        check_count(size, "count window size")
        if keyed.get_execution_environment().dialect.python_windows:
            if not slide:
                return cls(keyed, CountTumblingWindowAssigner(size))
            return cls(keyed, CountSlidingWindowAssigner(size, check_count(slide, "count window slide")))
        stream = cls(keyed, GlobalWindows.create())
        if slide is None:
            return stream.trigger(PurgingTrigger.of(CountTrigger.of(size)))
        check_count(slide, "count window slide")
        return stream.evictor(CountEvictor.of(size)).trigger(CountTrigger.of(slide))

    def _build(self, params: dict[str, Any], functions: list[str], output_type: TypeInformation | None) -> DataStream:
        keyed: KeyedStream = self._input  # type: ignore[assignment]
        spec = OperatorSpec(OperatorKind.WINDOW, {**params, "key_selector": keyed.key_selector})
        name = type(self._assigner).__name__
        return keyed._one_input(name, spec, description=self._description(functions), output_type=output_type)


#: How Flink's window_all apply()/process() names its window state (the serializer's JVM
#: address left out).
_WINDOW_CONTENTS = (
    "ListStateDescriptor{name=window-contents, defaultValue=null, "
    "serializer=org.apache.flink.api.common.typeutils.base.ListSerializer}"
)
#: Flink's CountEvictor has no toString(): its class name (without the JVM address).
_EVICTOR_NAMES = {"CountEvictor": "org.apache.flink.streaming.api.windowing.evictors.CountEvictor"}


class AllWindowedStream(_Windowed):
    """A non-keyed stream grouped into windows: one operator at parallelism 1."""

    _pass_through = "PassThroughAllWindowFunction"
    #: Where apply()/process() was called (the operator's name shows it, as Flink's does).
    _location = "<unknown>"

    def process(self, function: Any, output_type: TypeInformation | None = None) -> DataStream:
        """Call ``function.process(context, elements)`` (a ProcessAllWindowFunction) once per
        window firing; ``context`` has ``window()``, ``window_state()``, ``global_state()``."""
        self._location = call_location_name()
        return super().process(function, output_type)

    def apply(self, function: Any, output_type: TypeInformation | None = None) -> DataStream:
        """Call ``function.apply(window, inputs)`` (an AllWindowFunction) once per window firing."""
        self._location = call_location_name()
        return super().apply(function, output_type)

    def _trigger_window_name(self) -> str:
        # Flink 2.3 still names window_all's apply()/process() operator the old way: after its
        # window state, trigger, evictor and the user's call location.
        parts = [str(self._assigner), _WINDOW_CONTENTS, str(self._trigger)]
        if self._evictor is not None:
            parts.append(_EVICTOR_NAMES.get(self._evictor.class_name, str(self._evictor)))
        return f"TriggerWindow({', '.join(parts)}, AllWindowedStream.{self._location})"

    @classmethod
    def count(cls, stream: DataStream, size: int, slide: int | None = None) -> AllWindowedStream:
        """``count_window_all``: like ``count_window`` over the whole stream."""
        check_count(size, "count window size")
        windowed = cls(stream, GlobalWindows.create())
        if slide is None:
            return windowed.trigger(PurgingTrigger.of(CountTrigger.of(size)))
        check_count(slide, "count window slide")
        return windowed.evictor(CountEvictor.of(size)).trigger(CountTrigger.of(slide))

    def _description(self, functions: list[str]) -> str:
        parts = [str(self._assigner), str(self._trigger)]
        if self._evictor is not None:
            parts.append(self._evictor.class_name)
        return f"TriggerWindow({', '.join(parts + functions)})"

    def _build(self, params: dict[str, Any], functions: list[str], output_type: TypeInformation | None) -> DataStream:
        env = self._input.get_execution_environment()
        # Flink keys the stream by a constant (NullByteKeySelector) so that one subtask sees all.
        # Java's windowAll then runs at parallelism 1; PyFlink's window_all is a keyed window
        # at the default parallelism, its constant key on the subtask PyFlink routes it to.
        pyflink = env.dialect.python_windows
        keyed_by_null = PartitionTransformation(
            id=env.new_id(),
            name="Partition",
            parallelism=self._input.transformation.parallelism,
            inputs=[self._input.transformation],
            partitioner=Partitioner(HASH, key_selector=_null_byte_key, pyflink_key_type=env.dialect.key_type(None)),
            call_site=call_site(),
        )
        spec = OperatorSpec(OperatorKind.WINDOW, {**params, "key_selector": _null_byte_key, "all": True})
        whole_window = params["function_kind"] in ("process", "apply")
        name = self._trigger_window_name() if whole_window else type(self._assigner).__name__
        t = OneInputTransformation(
            id=env.new_id(),
            name=name,
            parallelism=env.get_parallelism() if pyflink else 1,
            inputs=[keyed_by_null],
            parallelism_configured=not pyflink,
            max_parallelism=-1 if pyflink else 1,
            description=name if whole_window else self._description(functions),
            operator=spec,
            state_key=_null_byte_key,
            call_site=call_site(),
            non_parallel=not pyflink,
        )
        env.add_operator(t)
        env.declare_type(t, check_type_info(output_type, "window output_type"))
        return DataStream(env, t)


def _null_byte_key(_record: Any) -> int:
    return 0
