"""ExecutionGraph wiring against what real Flink jobs measured, plus its structure."""

from __future__ import annotations

import json

import pytest
from conformance_support import CONFORMANCE

import flowmagic

TABLES = json.loads((CONFORMANCE / "pointwise_connections.json").read_text())


def _two_stage(up: int, down: int, exchange: str) -> flowmagic.ExecutionGraph:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    stream = env.from_collection([1, 2, 3]).rebalance().map(lambda x: x).set_parallelism(up)
    getattr(stream, exchange)().map(lambda x: x).set_parallelism(down).print()
    return env.get_execution_graph()


def _last_map(graph):
    return [v for v in graph.vertices.values() if v.name.startswith("Map") and v.job_vertex.inputs][-1]


@pytest.mark.parametrize("row", TABLES["pointwise"], ids=lambda r: f"{r['up']}to{r['down']}")
def test_pointwise_wiring_matches_flink(row) -> None:
    graph = _two_stage(row["up"], row["down"], "rescale")
    consumer = _last_map(graph)
    assert consumer.parallelism == row["down"]
    for subtask, computed in zip(consumer.subtasks, row["computed"], strict=True):
        (edge,) = subtask.inputs
        assert edge.distribution_pattern == row["distribution_pattern"] == "POINTWISE"
        assert edge.ship_strategy == row["ship_strategy"]
        assert edge.partitions == row["upstream_of_downstream"][subtask.index]
        (group,) = computed["groups"]
        assert [edge.partitions[0], edge.partitions[-1]] == group["partitions"]
        assert list(edge.subpartitions) == group["subpartitions"]


@pytest.mark.parametrize(
    "row", TABLES["broadcast"] + TABLES["global"], ids=lambda r: f"{r['ship_strategy']}{r['up']}to{r['down']}"
)
def test_all_to_all_edges_read_every_partition(row) -> None:
    graph = _two_stage(row["up"], row["down"], row["ship_strategy"].lower().replace("global", "global_"))
    consumer = _last_map(graph)
    for subtask in consumer.subtasks:
        (edge,) = subtask.inputs
        assert edge.distribution_pattern == "ALL_TO_ALL"
        assert edge.partitions == list(range(row["up"]))
        assert edge.subpartitions == (subtask.index, subtask.index)
        if row["ship_strategy"] == "BROADCAST":
            assert edge.partitions == row["upstream_of_downstream"][subtask.index]


def test_subtask_names_results_and_export() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=4)
    env.from_collection(["a b"]).map(lambda x: x).filter(bool).print()
    graph = env.get_execution_graph()
    source, chain = graph.vertices.values()
    assert [s.name for s in chain.subtasks] == [
        f"Map -> Filter -> Sink: Print to Std. Out ({i}/4)" for i in range(1, 5)
    ]
    assert source.max_parallelism == chain.max_parallelism == 128
    (result,) = source.produced_results
    assert result.partitions == [f"{result.id}#0"]
    exported = graph.to_dict()
    assert [v["name"] for v in exported["vertices"]] == ["Source: Collection Source", chain.name]
    assert exported["vertices"][1]["subtasks"][2]["inputs"][0] == {
        "source_vertex": source.id,
        "distribution_pattern": "ALL_TO_ALL",
        "ship_strategy": "REBALANCE",
        "result": result.id,
        "partitions": [0],
        "subpartitions": [2, 2],
    }
    assert json.loads(json.dumps(exported)) == exported


def test_max_parallelism_defaults_and_limits() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=86)
    env.from_sequence(1, 10).print()
    assert {v.max_parallelism for v in env.get_execution_graph().vertices.values()} == {256}

    env = flowmagic.StreamExecutionEnvironment(parallelism=8)
    # A vertex takes its chain head's max parallelism, so this map must head its own chain.
    env.from_sequence(1, 10).map(lambda x: x).set_max_parallelism(4).start_new_chain().print()
    with pytest.raises(flowmagic.FlowError, match=r"parallelism \(8\) is higher than the max parallelism \(4\)"):
        env.get_execution_graph()

    env = flowmagic.StreamExecutionEnvironment(parallelism=40000)
    env.from_sequence(1, 10).print()
    with pytest.raises(flowmagic.FlowError, match="Operator parallelism not within bounds: 40000"):
        env.get_execution_graph()


def test_batch_vertices_without_configured_parallelism_take_the_default() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=3)
    env.set_runtime_mode(flowmagic.RuntimeExecutionMode.BATCH)
    env.from_sequence(1, 10).map(lambda x: (x % 2, x)).key_by(lambda t: t[0]).sum(1).print()
    job_graph = env.get_job_graph()
    assert {v.parallelism for v in job_graph.vertices.values()} == {-1}
    assert {v.parallelism for v in job_graph.get_execution_graph().vertices.values()} == {3}
