"""Pass 3: JobGraph -> ExecutionGraph (what Flink's scheduler builds before deploying).

Vertices are attached in topological order. A vertex's parallelism of -1 (nobody chose
one) resolves as the scheduler resolves it; a max parallelism of -1 gets Flink's default.
POINTWISE inputs are wired with ``VertexInputInfoComputationUtils``' ranges; ALL_TO_ALL
consumers read every partition, subtask ``i`` reading subpartition ``i``.
"""

from __future__ import annotations

from flowmagic.compile.validation import check_event_time_inputs
from flowmagic.errors import InvalidParallelismError
from flowmagic.graph.execution_graph import (
    ExecutionEdge,
    ExecutionGraph,
    ExecutionJobVertex,
    ExecutionVertex,
    IntermediateResult,
)
from flowmagic.graph.job_graph import POINTWISE, JobGraph, JobVertex
from flowmagic.key_groups import compute_default_max_parallelism

__all__ = ["build_execution_graph", "pointwise_inputs"]


def build_execution_graph(job_graph: JobGraph) -> ExecutionGraph:
    """Expand every JobVertex of ``job_graph`` into subtasks and wire their inputs."""
    check_event_time_inputs(job_graph.stream_graph)
    graph = ExecutionGraph(job_name=job_graph.name, job_type=job_graph.job_type, job_graph=job_graph)
    for job_vertex in job_graph.sorted_vertices():
        parallelism = _resolve_parallelism(job_graph, job_vertex)
        max_parallelism = job_vertex.max_parallelism
        if max_parallelism <= 0:
            max_parallelism = compute_default_max_parallelism(parallelism)
        if parallelism > max_parallelism:
            raise InvalidParallelismError(
                f"Vertex {job_vertex.name}'s parallelism ({parallelism}) is higher than the max "
                f"parallelism ({max_parallelism}). Please lower the parallelism or increase the max parallelism."
            )
        vertex = ExecutionJobVertex(
            id=job_vertex.id,
            name=job_vertex.name,
            parallelism=parallelism,
            max_parallelism=max_parallelism,
            job_vertex=job_vertex,
        )
        vertex.produced_results = [
            IntermediateResult(
                id=dataset.id,
                producer=job_vertex.id,
                result_partition_type=dataset.result_partition_type,
                partitions=[f"{dataset.id}#{i}" for i in range(parallelism)],
            )
            for dataset in job_vertex.produced_datasets
        ]
        vertex.subtasks = [
            ExecutionVertex(vertex_id=job_vertex.id, index=i, name=f"{job_vertex.name} ({i + 1}/{parallelism})")
            for i in range(parallelism)
        ]
        for edge in job_vertex.inputs:
            upstream = graph.vertices[edge.source_vertex].parallelism
            for subtask in vertex.subtasks:
                if edge.distribution_pattern == POINTWISE:
                    partitions, subpartition = pointwise_inputs(upstream, parallelism, subtask.index)
                else:
                    partitions, subpartition = list(range(upstream)), subtask.index
                subtask.inputs.append(
                    ExecutionEdge(
                        source_vertex=edge.source_vertex,
                        distribution_pattern=edge.distribution_pattern,
                        ship_strategy=edge.ship_strategy,
                        result_id=edge.dataset.id,
                        partitions=partitions,
                        subpartitions=(subpartition, subpartition),
                        job_edge=edge,
                    )
                )
        graph.vertices[vertex.id] = vertex
    return graph


def _resolve_parallelism(job_graph: JobGraph, vertex: JobVertex) -> int:
    if vertex.parallelism > 0:
        return vertex.parallelism
    if job_graph.dynamic:
        # The adaptive batch scheduler picks at most parallelism.default; flowmagic takes
        # that bound, the choice it makes for inputs too small to measure.
        return job_graph.stream_graph.default_parallelism
    return 1


def pointwise_inputs(upstream: int, downstream: int, index: int) -> tuple[list[int], int]:
    """The producer subtasks consumer ``index`` reads over a POINTWISE edge, and the
    subpartition it reads in each of them."""
    if upstream >= downstream:
        start = index * upstream // downstream
        end = (index + 1) * upstream // downstream
        return list(range(start, end)), 0
    partition = index * upstream // downstream
    first = (partition * downstream + upstream - 1) // upstream
    after_last = ((partition + 1) * downstream + upstream - 1) // upstream
    return [partition], index % (after_last - first)
