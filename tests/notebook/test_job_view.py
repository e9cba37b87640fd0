"""The run view: its graph is a picture, and Records/s comes from a sliding window of counters.

Snapshots come from a real :class:`~flowmagic.runtime.metrics.JobMonitor` fed with executor
reports, as during a run; the times the view sees them at are given explicitly.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import replace

import pytest

import flowmagic
from flowmagic.runtime.metric_reports import CheckpointsReport, ContinuousReport, SinkFilesReport, SubtaskUpdate
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.widgets import JobView
from flowmagic.widgets.job_view import RATE_WINDOW

SOURCE, SINK = "source-vertex", "sink-vertex"


@pytest.fixture
def monitor() -> JobMonitor:
    monitor = JobMonitor("job")
    monitor.add_vertex(SOURCE, "Source", 1)
    monitor.add_vertex(SINK, "Sink", 2)
    return monitor


def job_graph() -> flowmagic.graph.JobGraph:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_sequence(1, 10).map(lambda x: x).print()
    return env.get_job_graph("job")


def report(monitor: JobMonitor, vertex: str, subtask: int, **fields) -> None:
    update = {"vertex": vertex, "subtask": subtask, "attempt": 0, "start": 1000.0, "host": "h", **fields}
    monitor.update(SubtaskUpdate.from_json(update))


def rate_of(view: JobView, vertex: str, subtask: int) -> float | None:
    [entry] = [
        entry
        for item in view.snapshot.vertices
        if item.id == vertex
        for entry in item.subtasks
        if entry.subtask == subtask
    ]
    return view.rates.rate(vertex, entry)


def test_a_running_subtask_has_the_rate_of_the_last_seconds(monitor) -> None:
    view = JobView(job_graph())
    for step in range(25):
        now = step * 0.5
        # The source emits 100 records/s for 6 s, then 300/s.
        emitted = int(100 * min(now, 6) + 300 * max(now - 6, 0))
        report(monitor, SOURCE, 0, state="RUNNING", out=emitted)
        view.update(monitor.snapshot(), now=now)
        rate = rate_of(view, SOURCE, 0)
        if now < 1:
            # Samples closer than a second apart give no rate, not a wild one.
            assert rate is None
        elif now <= 6:
            assert rate == pytest.approx(100)
        elif now >= 6 + RATE_WINDOW:
            # The window slid past the change: only the new rate is left.
            assert rate == pytest.approx(300)
        else:
            assert 100 < rate < 300
    # Not running yet: no rate.
    assert rate_of(view, SINK, 0) is None


def test_a_new_attempt_counts_again(monitor) -> None:
    view = JobView(job_graph())
    for step, (attempt, count) in enumerate([(0, 0), (0, 500), (0, 1000), (1, 0), (1, 100), (1, 200), (1, 300)]):
        update = {
            "vertex": SINK,
            "subtask": 1,
            "attempt": attempt,
            "start": 1000.0 + step,
            "state": "RUNNING",
            "in": count,
        }
        monitor.update(SubtaskUpdate.from_json(update))
        view.update(monitor.snapshot(), now=float(step))
        if step == 3:
            # Only the new attempt's counters count: one sample, no rate yet.
            assert rate_of(view, SINK, 1) is None
        elif step > 3:
            assert rate_of(view, SINK, 1) == pytest.approx(100)


def test_an_ended_subtask_shows_its_average_if_it_ran_long_enough(monitor) -> None:
    view = JobView(job_graph())
    report(monitor, SINK, 0, state="FINISHED", out=4000, end=1002.0)
    report(monitor, SINK, 1, state="FINISHED", out=3, end=1000.004)
    view.update(monitor.snapshot(), now=0.0)
    assert rate_of(view, SINK, 0) == pytest.approx(2000)
    # 3 records in 4 ms is not a rate of 750 records/s.
    assert rate_of(view, SINK, 1) is None


def test_the_view_shows_a_picture_and_dashes(monitor) -> None:
    view = JobView(job_graph())
    report(monitor, SINK, 0, state="FINISHED", out=3, end=1000.004)
    monitor.state = "RUNNING"
    view.update(monitor.snapshot(), now=0.0)
    html = view.to_html()
    # Inline SVG would be sanitized into its bare text in an untrusted notebook.
    assert "<svg" not in html
    [source] = re.findall(r'<img src="data:image/svg\+xml;base64,([^"]+)"', html)
    svg = base64.b64decode(source).decode("utf-8")
    assert svg.startswith("<svg") and "Source: Sequence Source -&gt; Map" in svg and ">CREATED<" in svg
    rows = re.findall(r"<tr><td>([^<]*)</td>.*?<td class='n'>([^<]*)</td></tr>", html)
    assert ("Sink (1/2)", "-") in rows


def test_a_continuous_job_with_a_file_sink_shows_its_committed_and_waiting_files() -> None:
    from flowmagic.widgets.job_view import _continuous_html

    continuous = ContinuousReport(
        status="RUNNING",
        epochs=12,
        restarts=0,
        restart_strategy="disable",
        last_failure=None,
        checkpoints=CheckpointsReport(
            completed=3, last_duration_ms=40.0, last_completed_at=None, last_size_bytes=2048, last_savepoint=None
        ),
        load={},
        files=SinkFilesReport(committed=1234, pending=2),
        printed_total=0,
        printed_tail=[],
        error=None,
    )
    shown = _continuous_html(continuous)
    assert "1,234 part files committed, 2 rolled and waiting for the next checkpoint" in shown
    assert "part files" not in _continuous_html(replace(continuous, files=None))


def test_reports_travel_as_json_and_read_back_typed(monitor) -> None:
    update = SubtaskUpdate(
        SOURCE,
        0,
        attempt=1,
        state="RUNNING",
        host="h:1",
        start=1000.0,
        records_out=7,
        watermark=5,
        metrics={"Source.seen": 7},
        stage=2,
        task=9,
        channels={f"{SINK}/0": 7},
    )
    wire = json.loads(json.dumps(update.to_json()))
    assert wire["out"] == 7 and "in" not in wire and "failure" not in wire
    assert SubtaskUpdate.from_json(wire) == update
    # A malformed field is left as the driver knew it; a report naming no subtask is none.
    assert SubtaskUpdate.from_json({**wire, "watermark": "x", "task": True}) == replace(
        update, watermark=None, task=None
    )
    assert SubtaskUpdate.from_json({"vertex": SOURCE, "subtask": "0"}) is None
    monitor.update(update)
    report = monitor.snapshot()
    [source] = [vertex for vertex in report.vertices if vertex.id == SOURCE]
    assert (source.records_out, source.subtasks[0].attempt, source.subtasks[0].task) == (7, 1, 9)
    data = json.loads(json.dumps(report.to_json()))
    assert data["reported_subtasks"] == 1 and "continuous" not in data
    [shown] = [vertex for vertex in data["vertices"] if vertex["id"] == SOURCE]
    assert shown["subtasks"][0]["channels"] == {f"{SINK}/0": 7} and shown["subtasks"][0]["watermark"] == 5
