"""The live view's event-time answer: why a window has not fired, on real jobs."""

from __future__ import annotations

import re

import pytest
from continuous_support import LineServer, Printed, start, wait_for

import flowmagic
from flowmagic import compile as passes
from flowmagic.runtime.metric_reports import JobReport
from flowmagic.runtime.records import MAX_WATERMARK
from flowmagic.widgets.event_time import event_time_text
from flowmagic.widgets.job_view import JobView


def _waiting_window_pipeline(env: flowmagic.StreamExecutionEnvironment, port: int) -> None:
    strategy = flowmagic.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event, _ts: event[1]
    )
    (
        env.socket_text_stream("127.0.0.1", port)
        .map(lambda line: (line.split(",")[0], int(line.split(",")[1]), 1))
        # Every event goes to the first subtask: the second never sees one, so its
        # watermark never moves and holds back the windows downstream (no idleness).
        .partition_custom(lambda key, partitions: 0, lambda event: event[0])
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda event: event[0])
        .window(flowmagic.TumblingEventTimeWindows.of(flowmagic.Time.seconds(5)))
        .sum(2)
        .print()
    )


def _window_vertex(report: JobReport):
    return next(vertex for vertex in report.vertices if "Window" in vertex.name)


@pytest.mark.e2e
def test_a_window_waiting_on_a_silent_channel_names_that_channel(spark) -> None:
    server = LineServer()
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _waiting_window_pipeline(env, server.port)
    graph = passes.build(env.get_stream_graph("waiting"))
    job = start(env, Printed(), "waiting")

    def pending() -> bool:
        vertex = _window_vertex(job.monitor.snapshot())
        return any(s.event_time is not None and s.event_time.pending is not None for s in vertex.subtasks)

    try:
        server.send("a,10000", "a,12100")
        wait_for(pending, job)
        snapshot = job.monitor.snapshot()
    finally:
        job.cancel()
        server.close()
    names = {vertex.id: vertex.name for vertex in snapshot.vertices}
    window = _window_vertex(snapshot)
    producer = next(vertex.name for vertex in snapshot.vertices if "Timestamps" in vertex.name)
    waiting = [s for s in window.subtasks if s.event_time is not None and s.event_time.pending is not None]
    assert len(waiting) == 1
    report = waiting[0].event_time
    assert report is not None and report.pending is not None
    assert (report.pending.key, report.pending.start, report.pending.end) == ("'a'", 10000, 15000)
    assert report.pending.fires_at == 14999
    # One channel per producer subtask: the first brought 12,099 (monotonous timestamps
    # lag by 1 ms), the second nothing.
    assert [(c.producer_subtask, c.watermark, c.idle) for c in report.channels][1][1:] == (-(2**63), False)
    assert report.channels[0].watermark == 12099
    sentence = event_time_text(window, names, snapshot.elapsed or 0)[0]
    assert re.fullmatch(
        rf"{re.escape(waiting[0].name)}: window \[00:00:10, 00:00:15\) of key 'a' fires when the watermark "
        rf"passes 00:00:14\.999; it has none yet, held back by channel 1 of subtask 1 "
        rf"\({re.escape(producer)}, idle for \d+ s\)",
        sentence,
    ), sentence
    view = JobView(graph.job_graph)
    view.update(snapshot)
    assert "held back by channel 1 of subtask 1" in view.to_html()


def test_a_bounded_run_reports_each_channels_watermark_and_no_pending_window() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    strategy = flowmagic.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event, _ts: event[1]
    )
    (
        env.from_collection([("a", 1000), ("b", 7000), ("a", 3000)])
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda event: event[0])
        .window(flowmagic.TumblingEventTimeWindows.of(flowmagic.Time.seconds(5)))
        .reduce(lambda left, right: (left[0], max(left[1], right[1])))
        .print()
    )
    result = env.execute("bounded windows")
    window = _window_vertex(result.metrics)
    for subtask in window.subtasks:
        report = subtask.event_time
        assert report is not None
        # Every input channel ended at the end of time, and no window is left waiting.
        assert [channel.watermark for channel in report.channels] == [MAX_WATERMARK] * len(report.channels)
        assert len(report.channels) >= 1 and report.pending is None
