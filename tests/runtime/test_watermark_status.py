"""Idle channels and watermarks, as Flink's StatusWatermarkValve combines a subtask's inputs."""

from __future__ import annotations

import flowmagic
from flowmagic import compile as passes
from flowmagic.runtime.plan import build_plans
from flowmagic.runtime.records import MIN_WATERMARK
from flowmagic.runtime.task import Subtask, SubtaskStats
from flowmagic.runtime.wire import WATERMARK, WATERMARK_STATUS


def _consumer() -> Subtask:
    """Subtask 1/1 of a keyed process reading two producer subtasks (two channels)."""
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    keyed = env.from_collection([1]).map(lambda v: v).key_by(lambda v: v)
    keyed.process(lambda value, ctx, out: None).set_parallelism(1)
    graph = passes.build(env.get_stream_graph("valve")).execution_graph
    plan = next(plan for plan in build_plans(graph).values() if plan.name == "KeyedProcess")
    subtask = Subtask(plan, 0, 0, SubtaskStats())
    subtask.open()
    return subtask


def _feed(subtask: Subtask, producer: int, kind: int, data: object) -> None:
    list(subtask.consume([((0, 0, producer, 0), (kind, data))]))


def test_an_idle_channel_stops_holding_the_watermark_back() -> None:
    subtask = _consumer()
    _feed(subtask, 0, WATERMARK, 100)
    assert subtask.watermark == MIN_WATERMARK
    _feed(subtask, 1, WATERMARK_STATUS, True)
    assert subtask.watermark == 100 and not subtask.idle


def test_when_every_channel_is_idle_the_most_advanced_watermark_is_the_subtasks() -> None:
    subtask = _consumer()
    _feed(subtask, 0, WATERMARK, 100)
    _feed(subtask, 1, WATERMARK, 50)
    assert subtask.watermark == 50
    _feed(subtask, 1, WATERMARK_STATUS, True)
    assert subtask.watermark == 100
    _feed(subtask, 0, WATERMARK_STATUS, True)
    assert subtask.idle


def test_a_channel_active_again_counts_once_it_caught_up() -> None:
    subtask = _consumer()
    _feed(subtask, 1, WATERMARK_STATUS, True)
    _feed(subtask, 0, WATERMARK, 100)
    assert subtask.watermark == 100
    _feed(subtask, 1, WATERMARK_STATUS, False)
    # Behind the subtask's watermark: not counted, the watermark goes on with channel 0.
    _feed(subtask, 1, WATERMARK, 40)
    _feed(subtask, 0, WATERMARK, 200)
    assert subtask.watermark == 200
    _feed(subtask, 1, WATERMARK, 250)
    _feed(subtask, 0, WATERMARK, 300)
    assert subtask.watermark == 250
