"""Evictors, DeltaTrigger, dynamic-gap sessions and window_all's whole-window functions:
what Flink refuses or does at their edges (their outputs are runtime cases r90-r96)."""

from __future__ import annotations

import re
from typing import Any

import pytest

import flowmagic
from flowmagic import CountTrigger, EventTimeSessionWindows, GlobalWindows, Time, WatermarkStrategy
from flowmagic.datastream.functions import AllWindowFunction, ProcessAllWindowFunction
from flowmagic.datastream.window import (
    CountEvictor,
    DeltaTrigger,
    DynamicEventTimeSessionWindows,
    SessionWindowTimeGapExtractor,
    TimeEvictor,
)
from flowmagic.errors import InvalidArgumentError, ProgramError
from flowmagic.graph.operator_params import WindowFunctionKind, WindowParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import implementation


def _events(env: flowmagic.StreamExecutionEnvironment, events: list) -> flowmagic.DataStream:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])
    return env.from_collection(events).assign_timestamps_and_watermarks(strategy)


class _GapOf(SessionWindowTimeGapExtractor):
    def extract(self, element):
        return element[2]


def test_a_dynamic_gap_must_be_positive_as_flink_says() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    sessions = (
        _events(env, [("a", 1000, 500), ("a", 2000, 0)])
        .key_by(lambda e: e[0])
        .window(EventTimeSessionWindows.with_dynamic_gap(_GapOf()))
        .reduce(lambda a, b: a)
    )
    with pytest.raises(flowmagic.FlowError, match=re.escape("Dynamic session time gap must satisfy 0 < gap")):
        list(sessions.execute_and_collect(executor="local"))


def test_with_dynamic_gap_takes_an_extractor_or_a_function() -> None:
    assert isinstance(EventTimeSessionWindows.with_dynamic_gap(lambda e: 5), DynamicEventTimeSessionWindows)
    assert str(EventTimeSessionWindows.with_dynamic_gap(_GapOf())) == "DynamicEventTimeSessionWindows()"
    with pytest.raises(InvalidArgumentError, match="SessionWindowTimeGapExtractor"):
        EventTimeSessionWindows.with_dynamic_gap(5)


def test_a_delta_trigger_cannot_merge_sessions() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    windowed = _events(env, [("a", 1000, 1)]).key_by(lambda e: e[0]).window(EventTimeSessionWindows.with_gap(10))
    with pytest.raises(ProgramError, match="does not support merging"):
        windowed.trigger(DeltaTrigger.of(1.0, lambda old, new: new[2] - old[2]))
    with pytest.raises(InvalidArgumentError, match="DeltaFunction"):
        DeltaTrigger.of(1.0, "distance")


def test_a_time_evictor_keeps_everything_of_elements_without_timestamps() -> None:
    # As Flink's TimeEvictor: no timestamp on the window's first element, nothing to compare.
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    counted = (
        env.from_collection([("a", 1), ("a", 2), ("a", 3), ("a", 4)])
        .key_by(lambda e: e[0])
        .window(GlobalWindows.create())
        .trigger(CountTrigger.of(2))
        .evictor(TimeEvictor.of(Time.milliseconds(1)))
        .apply(lambda key, window, inputs: [len(list(inputs))])
    )
    assert list(counted.execute_and_collect(executor="local")) == [2, 4]


def test_a_count_evictor_evicts_before_the_function_unless_told_after() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    keyed = _events(env, [("a", t, t) for t in (1, 2, 3, 4)]).key_by(lambda e: e[0])

    def seen(evictor: CountEvictor) -> list:
        windowed = keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(2)).evictor(evictor)
        return list(windowed.apply(lambda key, window, inputs: [[e[2] for e in inputs]]).execute_and_collect())

    assert seen(CountEvictor.of(1)) == [[2], [4]]
    assert seen(CountEvictor.of(1, do_evict_after=True)) == [[1, 2], [2, 3, 4]]


class _Starts(AllWindowFunction):
    def apply(self, window, inputs):
        return [window.start]


class _Firings(ProcessAllWindowFunction):
    def process(self, context, elements):
        return [context.window().start]


def test_window_all_whole_window_functions_are_named_as_flink_names_them() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    events = _events(env, [("a", 1000), ("b", 2500)])
    tumbling = flowmagic.TumblingEventTimeWindows.of(Time.seconds(10))
    line = test_window_all_whole_window_functions_are_named_as_flink_names_them.__code__.co_firstlineno + 5
    events.window_all(tumbling).apply(_Starts()).print()
    evicting = events.window_all(tumbling).trigger(CountTrigger.of(3)).evictor(CountEvictor.of(2))
    evicting.process(_Firings()).print()
    nodes = env.get_stream_graph().nodes.values()
    names = [node.name for node in nodes if node.name.startswith("TriggerWindow")]
    state = (
        "ListStateDescriptor{name=window-contents, defaultValue=null, "
        "serializer=org.apache.flink.api.common.typeutils.base.ListSerializer}"
    )
    here = "AllWindowedStream.test_window_all_whole_window_functions_are_named_as_flink_names_them"
    assert names == [
        f"TriggerWindow(TumblingEventTimeWindows(10000), {state}, EventTimeTrigger(), "
        f"{here}(test_window_evictors_and_sessions.py:{line}))",
        f"TriggerWindow(TumblingEventTimeWindows(10000), {state}, CountTrigger(3), "
        f"org.apache.flink.streaming.api.windowing.evictors.CountEvictor, "
        f"{here}(test_window_evictors_and_sessions.py:{line + 2}))",
    ]


class _CountsFirings(flowmagic.ProcessWindowFunction):
    def process(self, key, context, elements):
        firings = context.window_state().get_state(flowmagic.ValueStateDescriptor("firings", None))
        firings.update((firings.value() or 0) + 1)
        return [(key, firings.value())]


def _window_operator() -> tuple[Any, list]:
    task = TaskInfo("vertex", 0, 1, 128, 0, batch=False)
    params = WindowParams(
        key_selector=lambda e: e[0],
        assigner=GlobalWindows.create(),
        trigger=CountTrigger.of(1),
        evictor=None,
        allowed_lateness=0,
        late_tag=None,
        stamps_firing_time=False,
        function_kind=WindowFunctionKind.PROCESS,
        function=_CountsFirings(),
    )
    operator = implementation(OperatorKind.WINDOW)("op", params, task)
    emitted: list = []
    operator.output.targets.append(lambda value, timestamp: emitted.append(value))
    operator.output.seal()
    operator.open()
    return operator, emitted


def test_window_state_is_kept_by_checkpoints() -> None:
    before, emitted = _window_operator()
    for element in [("a", 1), ("a", 2), ("b", 3)]:
        before.process(element, None)
    assert emitted == [("a", 1), ("a", 2), ("b", 1)]
    after, emitted = _window_operator()
    after.restore_keyed(before.snapshot_keyed())
    after.process(("a", 4), None)
    assert emitted == [("a", 3)]
