"""The live view's answer to "where is the job slow?": busy and back-pressured time per
subtask, and the JobGraph coloured by it as Flink's web UI colours it, on real jobs."""

from __future__ import annotations

import base64
import re
import time

import pytest
from continuous_support import Printed, start, wait_for

import flowmagic
from flowmagic import compile as passes
from flowmagic.render import load_colours
from flowmagic.runtime.metric_reports import JobReport
from flowmagic.widgets.job_view import JobView, job_load


def _slow(value: int) -> int:
    time.sleep(0.01)
    return value


def _vertex(report: JobReport, name: str):
    return next(vertex for vertex in report.vertices if name in vertex.name)


def _graph_svg(view: JobView) -> str:
    """The JobGraph picture the view shows (an <img> with a data: URI), as SVG text."""
    match = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', view.to_html())
    assert match, "the view shows no JobGraph picture"
    return base64.b64decode(match.group(1)).decode()


def _redness(fill: str) -> int:
    red, green, blue = (int(fill[i : i + 2], 16) for i in (1, 3, 5))
    return red - (green + blue) // 2


def _assert_slow_map_is_busy_and_its_source_backpressured(report: JobReport, view: JobView) -> None:
    load = job_load(report)
    source, slow, sink = (load[(_vertex(report, name).id, 0)] for name in ("Source", "slow", "Sink"))
    # The map sleeps 10 ms a record: it is the busiest by far; the source, which takes next
    # to no time over a record, waits for it; the sink after it waits for input.
    assert slow.busy > 250 and slow.busy > 2 * max(source.busy, sink.busy), (source, slow, sink)
    assert slow.backpressured < 50 and sink.backpressured < 50, (source, slow, sink)
    assert source.backpressured > 200 and source.backpressured > 2 * source.busy, (source, slow, sink)
    svg = _graph_svg(view)
    slow_fill, _border = load_colours(round(slow.busy / 10), round(slow.backpressured / 10))
    source_fill, _border = load_colours(round(source.busy / 10), round(source.backpressured / 10))
    sink_fill, _border = load_colours(round(sink.busy / 10), round(sink.backpressured / 10))
    assert slow_fill in svg and source_fill in svg and sink_fill in svg
    # Flink's colours: idle blue (#5db1ff), busy red (#ee6464), back-pressured grey (#888888).
    assert _redness(slow_fill) > _redness(source_fill) and _redness(slow_fill) > _redness(sink_fill) + 40
    assert source_fill != load_colours(round(source.busy / 10), 0)[0]
    assert f"Busy (max): {round(slow.busy / 10)}%" in svg
    assert f"Backpressured (max): {round(source.backpressured / 10)}%" in svg
    assert "Back-pressured (ms/s)" in view.to_html() and "Idle (ms/s)" in view.to_html()


@pytest.mark.parametrize("executor", ["local", pytest.param("spark", marks=pytest.mark.e2e)])
def test_a_slow_map_of_a_bounded_job_is_busy_and_its_source_backpressured(spark, executor: str) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    # rebalance(): the map is a vertex of its own, between the source's and the sink's.
    numbers = env.from_sequence(1, 200).name("Source")
    numbers.rebalance().map(_slow).name("slow").rebalance().add_sink(lambda v: None).name("sink")
    graph = passes.build(env.get_stream_graph("slow bounded"))
    result = env.execute("slow bounded", executor=executor)
    assert result.metrics is not None
    view = JobView(graph.job_graph)
    view.update(result.metrics)
    _assert_slow_map_is_busy_and_its_source_backpressured(result.metrics, view)


@pytest.mark.e2e
def test_a_slow_map_of_a_continuous_job_is_busy_and_its_source_backpressured(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    numbers = env.from_datagen(lambda i: i, rows_per_second=2000).name("Source")
    numbers.rebalance().map(_slow).name("slow").rebalance().add_sink(lambda v: None).name("sink")
    graph = passes.build(env.get_stream_graph("slow continuous"))
    job = start(env, Printed(), "slow continuous")

    def measured() -> bool:
        load = job_load(job.snapshot())
        return any(figures.busy > 500 for figures in load.values())

    try:
        wait_for(measured, job, timeout=240)
        report = job.snapshot()
    finally:
        job.cancel()
    view = JobView(graph.job_graph)
    view.update(report)
    _assert_slow_map_is_busy_and_its_source_backpressured(report, view)


class _CountsAndWaits(flowmagic.KeyedProcessFunction):
    """Counts each key's records and keeps one event-time timer per key that never fires."""

    def open(self, runtime_context) -> None:
        self.count = runtime_context.get_state(flowmagic.ValueStateDescriptor("count", flowmagic.Types.LONG()))

    def process_element(self, value, ctx, out):
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_event_time_timer(10**12)
        out.collect(value)


@pytest.mark.e2e
def test_a_continuous_job_shows_each_operators_keys_timers_and_snapshots_and_its_checkpoints(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.enable_checkpointing(300)
    keyed = env.from_datagen(lambda i: f"k{i % 5}", rows_per_second=50).key_by(lambda key: key)
    keyed.process(_CountsAndWaits()).uid("counter").name("counter").add_sink(lambda v: None)
    graph = passes.build(env.get_stream_graph("counting"))
    job = start(env, Printed(), "counting")

    def settled() -> bool:
        report = job.snapshot()
        assert report.continuous is not None
        keys = sum(entry.keys for entry in report.continuous.state)
        return len(report.continuous.checkpoints.history) >= 3 and keys == 5

    try:
        wait_for(settled, job, timeout=240)
        report = job.snapshot()
    finally:
        job.cancel()
    assert report.continuous is not None
    state = [entry for entry in report.continuous.state if entry.operator == "counter"]
    assert sorted(entry.subtask for entry in state) == [0, 1]
    # Five keys over two subtasks, one timer each, every snapshot a file of some size.
    assert sum(entry.keys for entry in state) == 5 and all(entry.timers == entry.keys for entry in state)
    assert all(entry.snapshot_bytes > 0 for entry in state if entry.keys)
    history = report.continuous.checkpoints.history
    assert [record.id for record in history] == list(range(history[0].id, history[-1].id + 1))
    assert all(0 < record.checkpointed_bytes <= record.full_bytes for record in history)
    assert [record.epoch for record in history] == sorted({record.epoch for record in history})
    assert history[-1].full_bytes == report.continuous.checkpoints.last_size_bytes
    view = JobView(graph.job_graph)
    view.update(report)
    page = view.to_html()
    assert "Checkpoints history" in page and "Full Checkpoint Data Size" in page
    assert re.search(r"<td>counter</td><td class='n'>\d</td><td>[0-9a-f]{32}</td><td class='n'>\d</td>", page)
