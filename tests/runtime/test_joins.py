"""Window joins, coGroups and interval joins: what the API refuses, in Flink's words."""

from __future__ import annotations

import pytest

import flowmagic
from flowmagic import JoinFunction, ProcessJoinFunction, Time, TumblingEventTimeWindows
from flowmagic.errors import InvalidArgumentError, ProgramError


def _streams() -> tuple[flowmagic.DataStream, flowmagic.DataStream]:
    env = flowmagic.StreamExecutionEnvironment()
    return env.from_collection([("k", 1)]), env.from_collection([("k", 2)])


def test_interval_join_bounds_must_be_ordered() -> None:
    a, b = _streams()
    joined = a.key_by(lambda t: t[0]).interval_join(b.key_by(lambda t: t[0]))
    with pytest.raises(InvalidArgumentError, match="lowerBound <= upperBound must be fulfilled"):
        joined.between(Time.seconds(1), Time.milliseconds(-1))
    # Exclusive bounds narrow the interval by a millisecond each: [0, 0] becomes empty.
    with pytest.raises(InvalidArgumentError, match="lowerBound <= upperBound must be fulfilled"):
        joined.between(0, 0).lower_bound_exclusive().process(ProcessJoinFunction())


def test_interval_join_is_event_time_only_and_needs_keyed_inputs() -> None:
    a, b = _streams()
    keyed = a.key_by(lambda t: t[0])
    with pytest.raises(ProgramError, match="Time-bounded stream joins are only supported in event time"):
        keyed.interval_join(b.key_by(lambda t: t[0])).in_processing_time()
    with pytest.raises(ProgramError, match="interval_join\\(\\) expects a KeyedStream"):
        keyed.interval_join(b)


def test_window_join_needs_its_keys_and_window_in_order() -> None:
    a, b = _streams()
    with pytest.raises(ProgramError, match="call where\\(\\) before equal_to\\(\\)"):
        a.join(b).equal_to(lambda t: t[0])
    with pytest.raises(ProgramError, match="call window\\(\\) before apply\\(\\)"):
        a.co_group(b).where(lambda t: t[0]).equal_to(lambda t: t[0]).apply(lambda x, y: [])
    with pytest.raises(ProgramError, match="Expected a window assigner"):
        a.join(b).where(lambda t: t[0]).equal_to(lambda t: t[0]).window(Time.seconds(5))


def test_a_record_without_timestamp_fails_the_interval_join_naming_it() -> None:
    a, b = _streams()

    class Pair(ProcessJoinFunction):
        def process_element(self, left, right, ctx):
            yield (left, right)

    joined = a.key_by(lambda t: t[0]).interval_join(b.key_by(lambda t: t[0])).between(-1, 1).process(Pair())
    with pytest.raises(flowmagic.FlowError, match="Elements used in interval stream joins need to have timestamps"):
        list(joined.execute_and_collect(executor="local"))


def test_join_function_may_be_a_plain_function_and_flat_join_takes_out() -> None:
    strategy = flowmagic.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    a = env.from_collection([("k", 1000), ("k", 2000)]).assign_timestamps_and_watermarks(strategy)
    b = env.from_collection([("k", 1500)]).assign_timestamps_and_watermarks(strategy)
    window = TumblingEventTimeWindows.of(Time.seconds(5))
    plain = a.join(b).where(lambda t: t[0]).equal_to(lambda t: t[0]).window(window).apply(lambda x, y: x[1] + y[1])

    class Twice(JoinFunction):
        def join(self, first, second, out):
            out.collect(first[1])
            out.collect(second[1])

    flat = a.join(b).where(lambda t: t[0]).equal_to(lambda t: t[0]).window(window).apply(Twice())
    assert list(plain.execute_and_collect(executor="local")) == [2500, 3500]
    assert list(flat.execute_and_collect(executor="local")) == [1000, 1500, 2000, 1500]
