"""User-defined triggers: what flowmagic refuses, naming the trigger at fault."""

from __future__ import annotations

import pytest

import flowmagic
from flowmagic import EventTimeSessionWindows, Time, WatermarkStrategy
from flowmagic.datastream.window import Trigger, TriggerResult
from flowmagic.errors import ProgramError


class _Sloppy(Trigger):
    def on_element(self, element, timestamp, window, ctx):
        return True

    def clear(self, window, ctx):
        pass


def _keyed() -> flowmagic.KeyedStream:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])
    return env.from_collection([("a", 1000, 1)]).assign_timestamps_and_watermarks(strategy).key_by(lambda t: t[0])


def test_a_trigger_must_return_a_trigger_result() -> None:
    windowed = _keyed().window(flowmagic.TumblingEventTimeWindows.of(Time.seconds(5))).trigger(_Sloppy()).sum(2)
    with pytest.raises(flowmagic.FlowError, match=r"_Sloppy.on_element\(\) must return a TriggerResult, got True"):
        list(windowed.execute_and_collect(executor="local"))


def test_sessions_need_a_trigger_that_can_merge() -> None:
    with pytest.raises(ProgramError, match="cannot be used with a trigger that does not support merging"):
        _keyed().window(EventTimeSessionWindows.with_gap(Time.seconds(1))).trigger(_Sloppy())


def test_trigger_result_says_whether_it_fires_and_purges() -> None:
    assert [(r.is_fire(), r.is_purge()) for r in TriggerResult] == [
        (False, False),
        (True, True),
        (True, False),
        (False, True),
    ]


class _FireAtTimestamp(Trigger):
    """Fires when an element of timestamp 3000 arrives: on_element gets the element's
    timestamp, as in Flink, also in processing-time windows."""

    def on_element(self, element, timestamp, window, ctx):
        return TriggerResult.FIRE if timestamp == 3000 else TriggerResult.CONTINUE

    def on_event_time(self, time, window, ctx):
        return TriggerResult.CONTINUE

    def on_processing_time(self, time, window, ctx):
        return TriggerResult.CONTINUE

    def clear(self, window, ctx):
        pass


def test_a_trigger_gets_the_elements_timestamp_in_processing_time_windows() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    strategy = WatermarkStrategy.no_watermarks().with_timestamp_assigner(lambda e, _ts: e[1])
    sums = (
        env.from_collection([("a", 1000), ("a", 3000), ("a", 5000)])
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda e: e[0])
        .window(flowmagic.TumblingProcessingTimeWindows.of(Time.hours(1)))
        .trigger(_FireAtTimestamp())
        .reduce(lambda x, y: (x[0], x[1] + y[1]))
    )
    assert list(sums.execute_and_collect(executor="local")) == [("a", 4000)]
