"""The physical graph of every recorded case is what Flink 2.3 deployed.

``conformance/physical/expected`` holds, per case and cluster (``TMxSLOTS``, or ``local``: the
cluster a local environment starts), three runs on a Flink 2.3 MiniCluster (see
``conformance/physical/README.md``): where each subtask ran, its partitions and its gates.

What Flink decides the same way every run is compared exactly: which subtasks share a slot,
the partitions (subpartitions per consumer), the gates and channels (producer partition,
subpartitions read), and the error of a cluster with too few slots. Which TaskManager a slot
lands on is Flink's choice only up to a pattern: slots fill one TaskManager before the next,
but which slots go together changes from run to run when TaskManagers hold several slots.
There the number of slots per TaskManager is compared; with one TaskManager, or one slot per
TaskManager, the TaskManager of every subtask and whether each channel is local or remote. A
BATCH job's regions run one after another in whichever slots are free: there, only the wiring.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conformance_support import CONFORMANCE, run_case

from flowmagic import compile as passes
from flowmagic.graph.physical_graph import NOT_ENOUGH_SLOTS, ChannelKind, PhysicalGraph

FIXTURES = sorted((CONFORMANCE / "physical" / "expected").glob("*.json"))


def _fixture(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _compiled(fixture: dict[str, Any]) -> passes.CompiledJob:
    source = (CONFORMANCE / fixture["source"]).read_text()
    env, _ = run_case(source, fixture["source"])
    return passes.build(env.get_stream_graph())


def _cluster(config: str) -> tuple[int | None, int | None]:
    if config == "local":
        return None, None
    taskmanagers, slots = config.split("x")
    return int(taskmanagers), int(slots)


def normalized(graph: PhysicalGraph) -> list[dict[str, Any]]:
    """The physical graph in the fixtures' layout: TaskManagers and slots numbered by first
    appearance in topological subtask order."""
    taskmanagers: dict[int | None, int] = {}
    slots: dict[int, int] = {}
    subtasks = []
    for task in graph.tasks.values():
        subtasks.append(
            {
                "vertex": task.vertex_id,
                "index": task.index,
                "taskmanager": taskmanagers.setdefault(graph.taskmanager_of(task), len(taskmanagers)),
                "slot": slots.setdefault(task.slot, len(slots)),
                "partitions": [
                    [partition.consumer_vertex, partition.subpartitions, partition.partition_type]
                    for partition in task.partitions
                ],
                "gates": [
                    [gate.source_vertex, [[c.producer_subtask, *c.subpartitions, str(c.kind)] for c in gate.channels]]
                    for gate in task.gates
                ],
            }
        )
    return subtasks


def _without_kinds(subtasks: list[dict[str, Any]]) -> list[Any]:
    return [
        (s["vertex"], s["index"], s["slot"], s["partitions"], [[g[0], [c[:3] for c in g[1]]] for g in s["gates"]])
        for s in subtasks
    ]


def _wiring(subtasks: list[dict[str, Any]]) -> list[Any]:
    return [
        (s["vertex"], s["index"], s["partitions"], [[g[0], [c[:3] for c in g[1]]] for g in s["gates"]])
        for s in subtasks
    ]


def _slots_per_taskmanager(subtasks: list[dict[str, Any]]) -> list[int]:
    slots = {(s["taskmanager"], s["slot"]) for s in subtasks}
    return sorted(Counter(taskmanager for taskmanager, _ in slots).values())


@pytest.mark.parametrize("path", FIXTURES, ids=[path.stem for path in FIXTURES])
def test_physical_graph_matches_flink(path: Path) -> None:
    fixture = _fixture(path)
    compiled = _compiled(fixture)
    if "job_graph" in fixture:
        # The cases of this layer were written for it: their JobGraph must be Flink's first.
        fields = ("id", "parallelism", "slot_sharing_group", "inputs")
        ours = [{key: vertex[key] for key in fields} for vertex in compiled.job_graph.to_dict()["vertices"]]
        assert ours == [{key: vertex[key] for key in fields} for vertex in fixture["job_graph"]]
    for config, runs in fixture["configurations"].items():
        taskmanagers, slots = _cluster(config)
        graph = passes.deploy(compiled.execution_graph, taskmanagers, slots)
        statuses = {run["status"] for run in runs}
        assert len(statuses) == 1, f"{config}: Flink itself was not consistent: {statuses}"
        if statuses == {"FAILED"}:
            assert graph.error == NOT_ENOUGH_SLOTS, config
            assert graph.slots_needed > graph.slots_available
            for run in runs:
                assert (
                    run["error"]
                    == f"org.apache.flink.runtime.jobmanager.scheduler.NoResourceAvailableException: {NOT_ENOUGH_SLOTS}"
                )
            continue
        assert graph.error is None, config
        ours = normalized(graph)
        if graph.sequential_regions:
            # Blocking exchanges: each region runs when its inputs are done, in whichever slot
            # is free then, so Flink's placement is timing. Its wiring is not.
            for run in runs:
                assert _wiring(ours) == _wiring(run["subtasks"]), config
                assert graph.slots_needed <= len({s["slot"] for s in run["subtasks"]})
            continue
        exact = graph.taskmanagers == 1 or graph.slots_per_taskmanager == 1
        for run in runs:
            if exact:
                assert ours == run["subtasks"], config
            else:
                assert _without_kinds(ours) == _without_kinds(run["subtasks"]), config
                assert _slots_per_taskmanager(ours) == _slots_per_taskmanager(run["subtasks"]), config
        assert graph.slots_needed == len({s["slot"] for s in runs[0]["subtasks"]})


@pytest.mark.parametrize("path", FIXTURES, ids=[path.stem for path in FIXTURES])
def test_flink_channels_are_local_exactly_within_a_taskmanager(path: Path) -> None:
    # The rule the model applies to every cluster, checked on what Flink recorded (all runs).
    for runs in _fixture(path)["configurations"].values():
        for run in runs:
            if run["status"] != "FINISHED":
                continue
            where = {(s["vertex"], s["index"]): s["taskmanager"] for s in run["subtasks"]}
            for subtask in run["subtasks"]:
                for source, channels in subtask["gates"]:
                    for producer, _, _, kind in channels:
                        same = where[(source, producer)] == subtask["taskmanager"]
                        assert kind == ("LOCAL" if same else "REMOTE")


def test_a_local_environment_gives_one_taskmanager_a_slot_per_subtask_of_the_widest_vertex() -> None:
    fixture = _fixture(CONFORMANCE / "physical" / "expected" / "p05_seed_slot_sharing.json")
    graph = passes.deploy(_compiled(fixture).execution_graph)
    assert (graph.taskmanagers, graph.slots_per_taskmanager) == (1, 4)
    # The seed's example needs 1 + 4 + 4 slots: Flink's local environment cannot run it.
    assert [(group.name, group.slots) for group in graph.groups] == [("default", 1), ("flatmap_sg", 4), ("sum_sg", 4)]
    assert graph.slots_needed == 9 and graph.error == NOT_ENOUGH_SLOTS
    assert all(slot.taskmanager is None for slot in graph.slots)
    assert {channel.kind for task in graph.tasks.values() for gate in task.gates for channel in gate.channels} == {
        ChannelKind.UNKNOWN
    }
    assert fixture["configurations"]["local"][0]["status"] == "FAILED"
    more = passes.deploy(_compiled(fixture).execution_graph, 3)
    assert (more.taskmanagers, more.slots_per_taskmanager, more.error) == (3, 2, NOT_ENOUGH_SLOTS)


def test_to_dict_is_json_and_counts_what_it_lists() -> None:
    fixture = _fixture(CONFORMANCE / "physical" / "expected" / "p02_groups_all_to_all.json")
    graph = passes.deploy(_compiled(fixture).execution_graph, 3, 4)
    exported = graph.to_dict()
    assert json.loads(json.dumps(exported)) == exported
    # "default" holds the source (p=1) and the sink (p=2): it needs 2 slots.
    assert exported["slots_needed"] == 2 + 3 + 5 == graph.slots_needed
    assert [(group["name"], group["slots"]) for group in exported["groups"]] == [("default", 2), ("a", 3), ("b", 5)]
    assert sum(len(slot["tasks"]) for slot in exported["slots"]) == len(exported["tasks"]) == 1 + 3 + 5 + 2 + 2
    # Slots in opening order: default, a a a, b b b b b, default; four to a TaskManager. Local:
    # source -> a (3, all in TaskManager 1) and b -> b's four in TaskManager 2 (2 x 4).
    assert [slot.taskmanager for slot in graph.slots] == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    assert graph.channel_counts() == {"LOCAL": 3 + 8, "REMOTE": 15 + 2 + 2, "UNKNOWN": 0}
    assert "13 tasks in 10 slots on 3 TaskManagers x 4 slots" in repr(graph)


@pytest.mark.parametrize(("taskmanagers", "slots"), [(0, 1), (1, 0)])
def test_bad_cluster_sizes(taskmanagers: int, slots: int) -> None:
    fixture = _fixture(CONFORMANCE / "physical" / "expected" / "p03_disable_chaining.json")
    with pytest.raises(ValueError, match="at least 1"):
        passes.deploy(_compiled(fixture).execution_graph, taskmanagers, slots)


def test_a_batch_job_needs_its_largest_pipelined_regions_slots() -> None:
    fixture = _fixture(CONFORMANCE / "physical" / "expected" / "p07_batch_regions.json")
    execution_graph = _compiled(fixture).execution_graph
    graph = passes.deploy(execution_graph, 1, 2)
    # Every exchange is blocking: each of the 10 subtasks is a region of its own.
    assert (graph.sequential_regions, graph.slots_needed, graph.error) == (10, 1, None)
    assert [group.slots for group in graph.groups] == [2, 3, 3, 2]  # one default group per region
    assert all(run["status"] == "FINISHED" for run in fixture["configurations"]["1x2"])
    assert passes.deploy(execution_graph, 1, 1).error is None
