"""The physical graph as it ran on Spark (issue 26, "On Spark, side by side"): where each
subtask ran (Spark's executor id, the Python worker, stage, task and attempt), which channels
crossed processes, and the records each channel carried; its drawing and the live view."""

from __future__ import annotations

import base64
import os
import re
import textwrap
import time
from pathlib import Path

import pytest
from continuous_support import Printed, start, wait_for
from test_render import HEADER

import flowmagic
from flowmagic import compile as passes
from flowmagic.graph.physical_graph import ChannelKind, PhysicalGraph
from flowmagic.graph.spark_placement import SparkSubtask, place_on_spark
from flowmagic.render import dot_to_svg, set_titles, spark_placement_to_dot
from flowmagic.runtime import execute
from flowmagic.runtime.metric_reports import JobReport, SubtaskReport, VertexReport
from flowmagic.widgets.job_view import JobView, spark_placement


class _MeetOthers(flowmagic.MapFunction):
    """Each subtask waits (in ``open``) until every subtask of its vertex started, so that
    they run at once, hence in different Python workers."""

    def __init__(self, folder: str, parallelism: int):
        self.folder = folder
        self.parallelism = parallelism

    def open(self, ctx) -> None:
        Path(self.folder, str(ctx.get_index_of_this_subtask())).touch()
        deadline = time.time() + 120
        while len(os.listdir(self.folder)) < self.parallelism:
            if time.time() > deadline:
                raise TimeoutError("the other subtasks of the vertex never started")
            time.sleep(0.01)

    def map(self, value):
        return value


def _wordcount(tmp_path: Path) -> tuple[flowmagic.StreamExecutionEnvironment, str]:
    meet = tmp_path / "meet"
    meet.mkdir()
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    (
        env.from_collection(list(range(1000)))
        .rebalance()
        .map(_MeetOthers(str(meet), 2))
        .map(lambda x: (x % 7, 1))
        .key_by(lambda t: t[0])
        .sum(1)
        .print()
    )
    return env, "wordcount"


def test_a_spark_run_says_where_each_subtask_ran_and_what_each_channel_carried(spark, tmp_path) -> None:
    env, name = _wordcount(tmp_path)
    graph = env.get_execution_graph(name)
    result = execute(graph, spark=spark, echo=False)
    physical = passes.deploy(graph)
    placement = spark_placement(physical, result.metrics)
    assert placement is not None
    assert set(placement.subtasks) == set(physical.tasks)
    # Local mode runs every task in the driver's JVM: Spark calls that executor "driver".
    assert placement.executors == ["driver"]
    tasks = [subtask.task for subtask in placement.subtasks.values()]
    assert all(isinstance(task, int) for task in tasks) and len(set(tasks)) == len(tasks)
    # A vertex is a stage: its subtasks are that stage's tasks, each vertex its own stage.
    stages = {
        vertex: {s.stage for key, s in placement.subtasks.items() if key[0] == vertex}
        for vertex in physical.vertex_names
    }
    assert all(len(found) == 1 for found in stages.values())
    assert len({next(iter(found)) for found in stages.values()}) == len(stages)
    assert all(subtask.attempt == 0 for subtask in placement.subtasks.values())
    # Python workers are processes of their own, the two map subtasks two different ones.
    processes = {key: subtask.process for key, subtask in placement.subtasks.items()}
    assert all(process and not process.endswith(f":{os.getpid()}") for process in processes.values())
    maps = [process for (vertex, _), process in processes.items() if physical.vertex_names[vertex].startswith("Map")]
    assert len(set(maps)) == 2
    for channel in placement.channels:
        crossed = processes[channel.producer] != processes[channel.consumer]
        assert channel.spark is (ChannelKind.REMOTE if crossed else ChannelKind.LOCAL)
        assert channel.crosses_executor is False
    # Into each aggregation subtask, one of the two map subtasks' channels crossed processes.
    aggregation = next(v for v, n in physical.vertex_names.items() if n.startswith("Keyed Aggregation"))
    for index in range(2):
        into = [c for c in placement.channels if c.consumer == (aggregation, index)]
        assert len(into) == 2 and any(c.spark is ChannelKind.REMOTE for c in into)
    # The channels' records add up to what their consumers read, subtask by subtask.
    reads = {(v.id, s.subtask): s.records_in for v in result.metrics.vertices for s in v.subtasks}
    for key in physical.tasks:
        into = [channel.records for channel in placement.channels if channel.consumer == key]
        if into:
            assert sum(into) == reads[key] > 0, key
    assert sum(c.records or 0 for c in placement.channels if c.consumer[0] == aggregation) == 1000
    # The live view shows it, with the sentence on how Spark differs from Flink.
    view = JobView(graph.job_graph, physical)
    view.update(result.metrics)
    shown = view.to_html()
    counts = placement.channel_counts()
    assert "Physical graph on Spark: 5 of 5 subtasks placed on 1 executor (driver)" in shown
    assert f"{counts['REMOTE']} crossed processes" in shown and counts["REMOTE"] >= 2
    assert "Spark runs a vertex&#x27;s subtasks as the tasks of a stage" in shown
    assert "Physical graph of wordcount as it ran on Spark" in shown


def test_a_local_run_has_no_spark_picture() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_collection([1, 2, 3]).rebalance().map(lambda x: x).print()
    graph = env.get_execution_graph("local")
    result = execute(graph, executor="local", echo=False)
    view = JobView(graph.job_graph, passes.deploy(graph))
    view.update(result.metrics)
    assert spark_placement(passes.deploy(graph), result.metrics) is None
    assert "spark-physical" not in view.to_html()


@pytest.mark.e2e
def test_a_continuous_job_says_where_its_subtasks_ran_in_their_last_epoch(spark, tmp_path) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.enable_checkpointing(500)
    env.get_checkpoint_config().set_checkpoint_storage(f"file://{tmp_path / 'checkpoints'}")
    env.from_datagen(lambda i: (f"k{i % 7}", 1), rows_per_second=400).key_by(lambda p: p[0]).sum(1).print()
    printed = Printed()
    job = start(env, printed, "continuous placement")
    try:
        wait_for(lambda: job.epochs >= 3 and len(printed.pairs()) >= 200, job)

        def placed():
            found = spark_placement(passes.deploy(job.graph), job.snapshot())
            return found is not None and len(found.subtasks) == 4 and found.executors == ["driver"]

        wait_for(placed, job)
        job.cancel()
    finally:
        if not job.get_job_status().is_globally_terminal:
            job.cancel()
    snapshot = job.snapshot()
    placement = spark_placement(passes.deploy(job.graph), snapshot)
    assert placement is not None and placement.executors == ["driver"]
    assert all(s.process and s.stage is not None and s.task is not None for s in placement.subtasks.values())
    # Every epoch's records add up: what the aggregation read came over its channels.
    aggregation = snapshot.vertices[-1]
    assert sum(c.records or 0 for c in placement.channels) == aggregation.records_in > 0


def _physical() -> PhysicalGraph:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_collection([1, 2]).rebalance().map(lambda x: x).name("double").print()
    return passes.deploy(env.get_execution_graph("golden"), 1, 2)


def test_the_spark_drawing_golden_dot() -> None:
    physical = _physical()
    source, double = physical.vertex_names
    ran = [
        SparkSubtask(source, 0, 0, "driver", "vm:11", 0, 0, {(double, 0): 30, (double, 1): 10}),
        SparkSubtask(double, 0, 1, "driver", "vm:11", 1, 5),
        SparkSubtask(double, 1, 0, "2", "vm:12", 1, 2),
    ]
    dot = spark_placement_to_dot(place_on_spark(physical, ran))
    source_task = "Source: Collection Source (1/1)"
    legend = "solid: same process, dashed: another process, bold: another executor; colour: records"
    box = 'style="rounded,filled"; fillcolor="#f3f4f6"; color="#9ca3af"; fontsize=10;'
    expected = (
        'digraph "Physical on Spark" {\n'
        + HEADER
        + "compound=true;\n"
        + textwrap.dedent(f"""\
            label="golden on Spark · {legend}"; labelloc=t;
            subgraph cluster_e0 {{
            label="executor 2 · 1 process"; {box}
            subgraph cluster_e0p0 {{
            label="Python worker vm:12"; style="rounded,filled"; fillcolor="#ffffff"; color="#9ca3af"; fontsize=9;
            s1_1 [label="double -> Sink: Print to Std. Out (2/2)\\nstage 1 · task 2 · attempt 0", fillcolor="#dbeafe"];
            }}
            }}
            subgraph cluster_e1 {{
            label="executor driver · 1 process"; {box}
            subgraph cluster_e1p0 {{
            label="Python worker vm:11"; style="rounded,filled"; fillcolor="#ffffff"; color="#9ca3af"; fontsize=9;
            s0_0 [label="{source_task}\\nstage 0 · task 0 · attempt 0", fillcolor="#dbeafe"];
            s1_0 [label="double -> Sink: Print to Std. Out (1/2)\\nstage 1 · task 5 · attempt 1", fillcolor="#dbeafe"];
            }}
            }}
            s0_0 -> s1_0 [color="#1e3a8a", label="30"];
            s0_0 -> s1_1 [color="#60a5fa", label="10", style=dashed, penwidth=2.2];
            }}
            """)
    )
    assert dot.source == expected
    assert dot.titles["s0_0->s1_1"] == (
        f"{source_task} -> double -> Sink: Print to Std. Out (2/2): REBALANCE, 10 records\n"
        "Spark: a shuffle, another executor; Flink: local channel"
    )


def test_the_spark_drawing_of_a_large_job_draws_a_node_per_vertex_and_process() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=40)
    env.from_sequence(1, 100).key_by(lambda x: x % 7).sum(0).print()
    physical = passes.deploy(env.get_execution_graph("large"))
    source, aggregation = physical.vertex_names
    ran = [
        SparkSubtask(vertex, index, 0, str(index % 2), f"vm:{index % 4}", position, 100 * position + index)
        for position, vertex in enumerate((source, aggregation))
        for index in range(40)
    ]
    started = time.perf_counter()
    placement = place_on_spark(physical, ran)
    dot = spark_placement_to_dot(placement)
    svg = set_titles(dot_to_svg(dot.source), dot.titles)
    assert time.perf_counter() - started < 5
    assert len(placement.channels) == 1600
    assert svg.count('<g id="node') == 8  # two vertices in each of four processes
    assert "20 subtasks" not in svg and "10 subtasks" in svg


def _snapshot(physical: PhysicalGraph, state: str, process_of_first: str, records: int, task: int) -> JobReport:
    source, double = physical.vertex_names

    def subtask(vertex: str, index: int, host: str, task: int, channels: dict[str, int]) -> SubtaskReport:
        return SubtaskReport(
            vertex=vertex,
            subtask=index,
            name=f"{vertex} ({index + 1})",
            state=state,
            attempt=0,
            host=host,
            start_time=None,
            duration=None,
            records_in=0,
            records_out=0,
            watermark=None,
            metrics={},
            reported=True,
            stage=0,
            task=task,
            executor="driver",
            channels=channels,
        )

    def vertex(vertex_id: str, subtasks: list[SubtaskReport]) -> VertexReport:
        return VertexReport(id=vertex_id, name=vertex_id, state=state, records_in=0, records_out=0, subtasks=subtasks)

    vertices = [
        vertex(source, [subtask(source, 0, process_of_first, task, {f"{double}/0": records})]),
        vertex(double, [subtask(double, i, "vm:2", task + 1 + i, {}) for i in range(2)]),
    ]
    return JobReport(
        job="job",
        state=state,
        elapsed=None,
        finished_subtasks=0,
        total_subtasks=3,
        metrics_address=None,
        reported_subtasks=3,
        vertices=vertices,
    )


def test_the_spark_picture_is_redrawn_at_once_when_a_subtask_moves_else_every_few_seconds() -> None:
    from flowmagic.widgets.job_view import SPARK_REDRAW, SparkPicture

    physical = _physical()
    picture = SparkPicture(physical)

    def drawn(state: str, process: str, records: int, task: int, now: float) -> str:
        shown = picture.html(_snapshot(physical, state, process, records, task), now=now)
        source = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', shown)
        assert source is not None
        return base64.b64decode(source.group(1)).decode()

    first = drawn("RUNNING", "vm:1", 10, 0, now=100.0)
    assert "10 records" in first and "task 0" in first
    # New counts and new Spark tasks (a continuous job's next epoch) wait for SPARK_REDRAW...
    assert drawn("RUNNING", "vm:1", 20, 5, now=100.5) == first
    redrawn = drawn("RUNNING", "vm:1", 20, 5, now=100.0 + SPARK_REDRAW)
    assert "20 records" in redrawn and "task 5" in redrawn
    # ...while a subtask that ran in another process is drawn there at once,
    moved = drawn("RUNNING", "vm:2", 25, 5, now=100.0 + SPARK_REDRAW + 0.1)
    assert "vm:1" not in moved and "25 records" in moved
    # and the job's end is drawn as it ended.
    assert "30 records" in drawn("FINISHED", "vm:2", 30, 5, now=100.0 + SPARK_REDRAW + 0.2)
