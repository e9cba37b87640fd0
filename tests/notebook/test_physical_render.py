"""Drawing the physical graph: golden DOT, the SVG's boxes and hover texts, large jobs, errors."""

from __future__ import annotations

import re
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conformance_support import CONFORMANCE, run_case
from test_render import HEADER, groups, texts, title

import flowmagic
from flowmagic import compile as passes
from flowmagic.graph.physical_graph import PhysicalGraph
from flowmagic.render import physical_graph_to_dot, to_dot, to_svg

PHYSICAL_CASES = sorted((CONFORMANCE / "physical" / "cases").glob("*.py"))


def physical(case: Path, taskmanagers: int | None = None, slots: int | None = None) -> PhysicalGraph:
    env, _ = run_case(case.read_text(), str(case))
    return passes.deploy(passes.build(env.get_stream_graph("job")).execution_graph, taskmanagers, slots)


def wide(parallelism: int = 32, taskmanagers: int | None = None, slots: int | None = None) -> PhysicalGraph:
    """12 vertices (chaining disabled) at ``parallelism``."""
    env = flowmagic.StreamExecutionEnvironment(parallelism=parallelism)
    env.disable_operator_chaining()
    stream = env.from_sequence(1, 100).key_by(lambda x: x % 7).sum(0)
    for _ in range(9):
        stream = stream.map(lambda x: x)
    stream.print()
    return passes.deploy(env.get_execution_graph("wide"), taskmanagers, slots)


def test_physical_graph_dot_golden() -> None:
    graph = physical(CONFORMANCE / "flink" / "cases" / "c01_wordcount.py", 2, 2)
    task = '[label="{}", fillcolor="#dbeafe"];'
    aggregation = "Keyed Aggregation -> Sink: Print to Std. Out ({}/4)\\nin: 1 gate, 4 channels (2 local, 2 remote)"
    flat_map = "Flat Map ({}/4)\\nin: 1 gate, 1 channel (1 {})\\nout: 1 partition, 4 subpartitions"
    slot = 'label="slot {} · default"; style="rounded,filled"; fillcolor="#ffffff"; color="#9ca3af"; fontsize=9;'
    tm = (
        'label="TaskManager {} · 2 of 2 slots used"; style="rounded,filled"; fillcolor="#f3f4f6"; '
        'color="#9ca3af"; fontsize=10;'
    )
    remote = " [style=dashed, penwidth=1.8]"
    source = task.format("Source: Collection Source (1/1)\\nout: 1 partition, 4 subpartitions")
    expected = (
        'digraph "Physical" {\n'
        + HEADER
        + "compound=true;\n"
        + 'label="4 slots needed = 4 (default) · 2 TaskManagers x 2 slots · solid: local channel, dashed: remote '
        'channel"; labelloc=t;\n'
        + textwrap.dedent(f"""\
            subgraph cluster_tm0 {{
            {tm.format(1)}
            subgraph cluster_slot0 {{
            {slot.format(1)}
            t0_0 {source}
            t0_1 {task.format(flat_map.format(1, "local"))}
            t0_2 {task.format(aggregation.format(1))}
            }}
            subgraph cluster_slot1 {{
            {slot.format(2)}
            t1_1 {task.format(flat_map.format(2, "local"))}
            t1_2 {task.format(aggregation.format(2))}
            }}
            }}
            subgraph cluster_tm1 {{
            {tm.format(2)}
            subgraph cluster_slot2 {{
            {slot.format(1)}
            t2_1 {task.format(flat_map.format(3, "remote"))}
            t2_2 {task.format(aggregation.format(3))}
            }}
            subgraph cluster_slot3 {{
            {slot.format(2)}
            t3_1 {task.format(flat_map.format(4, "remote"))}
            t3_2 {task.format(aggregation.format(4))}
            }}
            }}
            t0_0 -> t0_1;
            t0_0 -> t1_1;
            t0_0 -> t2_1{remote};
            t0_0 -> t3_1{remote};
            """)
    )
    wires = []
    for consumer in range(4):
        for producer in range(4):
            same = (producer < 2) == (consumer < 2)
            wires.append(f"t{producer}_1 -> t{consumer}_2{'' if same else remote};\n")
    assert physical_graph_to_dot(graph).source == expected + "".join(wires) + "}\n"


def test_svg_boxes_taskmanagers_and_slots_with_hover_details() -> None:
    graph = physical(CONFORMANCE / "physical" / "cases" / "p05_seed_slot_sharing.py", 3, 3)
    svg = to_svg(graph)
    clusters = {title(cluster): texts(cluster) for cluster in groups(svg, "cluster")}
    assert [name for name in clusters if name.startswith("TaskManager")] == [
        "TaskManager 1 · 3 of 3 slots used",
        "TaskManager 2 · 3 of 3 slots used",
        "TaskManager 3 · 3 of 3 slots used",
    ]
    slot_titles = [name for name in clusters if name.startswith("Slot: ")]
    assert len(slot_titles) == 9 == graph.slots_needed
    assert "Slot: 2, TaskManager 1\nSlot sharing group: flatmap_sg\nFlat Map (1/4): in: 1 gate" in slot_titles[1]
    nodes = {title(node).splitlines()[0]: title(node) for node in groups(svg, "node")}
    assert "Task: Keyed Aggregation (1/3)" in nodes
    keyed = nodes["Task: Keyed Aggregation (1/3)"]
    assert "Runs in: TaskManager 2" in keyed and "Slot: 6 (slot sharing group 'sum_sg')" in keyed
    assert "InputGate 1: HASH from Flat Map subtasks 0-3: 4 channels (2 local, 2 remote)" in keyed
    assert "ResultPartition 1: PIPELINED_BOUNDED, 4 subpartitions, read by Sink: Print to Std. Out" in keyed
    assert len(groups(svg, "node")) == sum(len(slot.tasks) for slot in graph.slots)
    dashed = [edge for edge in groups(svg, "edge") if "stroke-dasharray" in ET.tostring(edge, encoding="unicode")]
    remote = sum(1 for task in graph.tasks.values() for gate in task.gates for c in gate.channels if c.kind == "REMOTE")
    assert len(dashed) == remote > 0


def test_free_slots_and_idle_taskmanagers_are_shown() -> None:
    graph = physical(CONFORMANCE / "physical" / "cases" / "p03_disable_chaining.py", 3, 2)
    source = to_dot(graph).source
    assert "TaskManager 1 · 2 of 2 slots used" in source and "TaskManager 2 · 1 of 2 slots used" in source
    assert 'free_tm1 [label="1 free slot"' in source
    assert "TaskManager 3 · 0 of 2 slots used" in source and 'free_tm2 [label="2 free slots"' in source


def test_a_job_without_enough_slots_is_drawn_as_flinks_error() -> None:
    graph = physical(CONFORMANCE / "physical" / "cases" / "p05_seed_slot_sharing.py")
    svg = to_svg(graph)
    [note] = groups(svg, "node")
    assert texts(note) == [
        "NoResourceAvailableException: Could not acquire the minimum required resources.",
        "The job needs 9 slots = 1 (default) + 4 (flatmap_sg) + 4 (sum_sg)",
        "(per slot sharing group, its highest parallelism);",
        "the cluster has 1 TaskManagers x 4 slots = 4.",
    ]
    assert groups(svg, "edge") == [] and groups(svg, "cluster") == []


def test_large_jobs_draw_their_first_slots_and_the_last() -> None:
    graph = wide(32, 8, 4)
    source = to_dot(graph).source
    # Three slots of TaskManager 1 and the last one of TaskManager 8, each one node listing its
    # tasks (48 tasks would be drawn: too many for a node each).
    assert re.findall(r"^(slot\d+) \[", source, re.M) == ["slot0", "slot1", "slot2", "slot31"]
    assert "… 5 more tasks" in source and "11 channels inside the slot" in source
    assert 'more_tm0 [label="… 1 more slot\\n(12 tasks)"' in source
    assert 'more_tm7 [label="… 3 more slots\\n(36 tasks)"' in source
    assert 'more_tms [label="… 6 more TaskManagers\\n(24 slots used, 288 tasks)"' in source
    assert "subgraph cluster_tm0 {" in source and "subgraph cluster_tm7 {" in source
    assert "cluster_tm1 " not in source
    svg = to_svg(graph)
    assert len(groups(svg, "node")) == 4 + 3
    every = to_dot(graph, all_subtasks=True).source
    assert len(re.findall(r"^slot\d+ \[", every, re.M)) == 32 and "more_" not in every


@pytest.mark.parametrize("case", PHYSICAL_CASES, ids=[case.stem for case in PHYSICAL_CASES])
def test_every_physical_case_draws(case: Path) -> None:
    for taskmanagers, slots in ((None, None), (2, 4), (16, 1)):
        svg = to_svg(physical(case, taskmanagers, slots))
        ET.fromstring(svg)
        assert svg.startswith("<svg")


def test_names_show_literally() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    nasty = '<img src=x onerror="alert(1)"> & "quoted" \\N'
    env.from_sequence(1, 5).map(lambda x: x).name(nasty).disable_chaining().print()
    svg = to_svg(passes.deploy(env.get_execution_graph()))
    assert "<img" not in svg and f"{nasty} (1/2)" in [t for node in groups(svg, "node") for t in texts(node)]


def test_a_1600_subtask_job_is_computed_and_drawn_within_a_second_and_a_half() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=32)
    stream = env.from_sequence(1, 1_000)
    for index in range(48):
        stream = stream.key_by(lambda x: x % 10).map(lambda x: x) if index % 2 else stream.rescale().map(lambda x: x)
    stream.print().disable_chaining()
    execution_graph = env.get_execution_graph()
    assert execution_graph.num_subtasks == 1_600
    to_svg(wide(2))  # the Graphviz engine started
    start = time.perf_counter()
    svg = to_svg(passes.deploy(execution_graph, 8, 4))
    # bench/bench_render.py measures it (under 1 s); here a loaded machine gets some slack.
    assert time.perf_counter() - start < 3.0
    assert "… 6 more TaskManagers" in svg
