"""Watermark generators as Flink runs them: built-in ones periodic (every
``pipeline.auto-watermark-interval`` of processing time), ``for_generator`` ones punctuated
or periodic as they are written. On the local executor; the runtime cases r102-r104 check
the same on Spark against what Flink emitted."""

from __future__ import annotations

import time

import pytest

from flowmagic import (
    KeyedProcessFunction,
    StreamExecutionEnvironment,
    Watermark,
    WatermarkGenerator,
    WatermarkStrategy,
    errors,
)

MIN = -(2**63)


class _ShowWatermark(KeyedProcessFunction):
    def process_element(self, value, ctx, out):
        out.collect((value, ctx.timer_service().current_watermark()))


def _watermarks_seen(strategy: WatermarkStrategy, values: list[int], delay: float = 0.0) -> list[tuple[int, int]]:
    """(value, watermark when it arrived downstream) for values used as their own timestamps."""
    env = StreamExecutionEnvironment(parallelism=1)

    def slowly(value: int) -> int:
        time.sleep(delay)
        return value

    stream = env.from_collection(values)
    if delay:
        stream = stream.map(slowly)
    seen = (
        stream.assign_timestamps_and_watermarks(strategy.with_timestamp_assigner(lambda value, _ts: value))
        .key_by(lambda _value: 0)
        .process(_ShowWatermark())
    )
    return list(seen.execute_and_collect(executor="local"))


class _EveryRecord(WatermarkGenerator):
    def on_event(self, event, event_timestamp, output):
        output.emit_watermark(Watermark(event_timestamp - 1))


class _EveryTenth(WatermarkGenerator):
    """Periodic: remembers the highest timestamp and emits it only when asked."""

    def __init__(self):
        self.highest = MIN

    def on_event(self, event, event_timestamp, output):
        self.highest = max(self.highest, event_timestamp)

    def on_periodic_emit(self, output):
        output.emit_watermark(self.highest)


def test_built_in_generators_emit_nothing_before_their_first_interval() -> None:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(0)
    assert _watermarks_seen(strategy, [1000, 2000, 3000]) == [(1000, MIN), (2000, MIN), (3000, MIN)]


def test_built_in_generators_emit_between_records_slower_than_the_interval() -> None:
    strategy = WatermarkStrategy.for_monotonous_timestamps()
    seen = _watermarks_seen(strategy, [1000, 2000, 3000], delay=0.25)
    assert seen == [(1000, MIN), (2000, 999), (3000, 1999)]


def test_a_punctuated_generator_emits_after_every_record() -> None:
    strategy = WatermarkStrategy.for_generator(lambda context: _EveryRecord())
    assert _watermarks_seen(strategy, [1000, 3000, 2000]) == [(1000, MIN), (3000, 999), (2000, 2999)]


def test_a_periodic_generator_of_your_own_is_asked_every_interval() -> None:
    strategy = WatermarkStrategy.for_generator(lambda context: _EveryTenth())
    assert _watermarks_seen(strategy, [1000, 2000]) == [(1000, MIN), (2000, MIN)]
    assert _watermarks_seen(strategy, [1000, 2000], delay=0.25) == [(1000, MIN), (2000, 1000)]


def test_watermarks_that_do_not_advance_are_dropped() -> None:
    class Backwards(WatermarkGenerator):
        def on_event(self, event, event_timestamp, output):
            output.emit_watermark(Watermark(event_timestamp))

    strategy = WatermarkStrategy.for_generator(lambda context: Backwards())
    assert _watermarks_seen(strategy, [3000, 1000, 2000]) == [(3000, MIN), (1000, 3000), (2000, 3000)]


def test_for_generator_needs_a_supplier_of_generators() -> None:
    with pytest.raises(errors.InvalidTypeError, match="lambda context: MyGenerator"):
        WatermarkStrategy.for_generator(_EveryRecord())
    with pytest.raises(errors.JobError, match="must return a WatermarkGenerator"):
        _watermarks_seen(WatermarkStrategy.for_generator(lambda context: 42), [1])


def test_a_failing_generator_fails_the_job_naming_its_operator_and_record() -> None:
    class Broken(WatermarkGenerator):
        def on_event(self, event, event_timestamp, output):
            raise ValueError("no watermark for you")

    with pytest.raises(errors.JobError, match="no watermark for you") as raised:
        _watermarks_seen(WatermarkStrategy.for_generator(lambda context: Broken()), [7])
    assert "Timestamps/Watermarks" in str(raised.value)
    assert "7" in str(raised.value)
