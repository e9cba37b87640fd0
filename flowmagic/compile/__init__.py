"""The passes that turn a program into graphs, one module per pass.

``stream_graph_generator`` (with ``translators`` and ``hashing``) -> ``job_graph_generator``
(with ``chaining``) -> ``execution_graph_builder`` -> ``physical_graph_builder``.
:func:`generate` is the first pass, :func:`build` the next two: together, the one way from a
program to the graphs the runtime runs. :func:`deploy` is the last: where Flink would run
each subtask, which flowmagic shows but does not need to run a job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from flowmagic.compile.execution_graph_builder import build_execution_graph
from flowmagic.compile.job_graph_generator import create_job_graph
from flowmagic.compile.physical_graph_builder import build_physical_graph
from flowmagic.compile.stream_graph_generator import generate_stream_graph
from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.graph.job_graph import JobGraph
from flowmagic.graph.physical_graph import PhysicalGraph
from flowmagic.graph.stream_graph import StreamGraph
from flowmagic.graph.transformations import Transformation
from flowmagic.vocabulary.pipeline_config import PipelineConfig

__all__ = ["CompiledJob", "build", "deploy", "generate"]


@dataclass(frozen=True)
class CompiledJob:
    """The three graphs of one job, as the runtime takes them."""

    stream_graph: StreamGraph
    job_graph: JobGraph
    execution_graph: ExecutionGraph


class _Passes:
    """What a generated StreamGraph calls for Flink's ``getJobGraph()``-style methods."""

    def job_graph(self, graph: StreamGraph, job_name: str | None) -> JobGraph:
        return create_job_graph(graph, job_name)

    def execution_graph(self, graph: JobGraph) -> ExecutionGraph:
        return build_execution_graph(graph)


_PASSES = _Passes()


def generate(
    transformations: Iterable[Transformation], config: PipelineConfig, new_id: Callable[[], int]
) -> StreamGraph:
    """The StreamGraph of ``transformations`` (with its operator hashes); ``new_id`` hands out
    the ids of virtual nodes."""
    return generate_stream_graph(transformations, config, new_id, _PASSES)


def build(stream_graph: StreamGraph, job_name: str | None = None) -> CompiledJob:
    """Chain ``stream_graph`` into its JobGraph and expand that into its ExecutionGraph."""
    job_graph = create_job_graph(stream_graph, job_name)
    return CompiledJob(stream_graph, job_graph, build_execution_graph(job_graph))


def deploy(
    execution_graph: ExecutionGraph, taskmanagers: int | None = None, slots_per_taskmanager: int | None = None
) -> PhysicalGraph:
    """Where Flink would run ``execution_graph`` on ``taskmanagers`` TaskManagers of
    ``slots_per_taskmanager`` slots (defaults: the cluster a local environment starts)."""
    return build_physical_graph(execution_graph, taskmanagers, slots_per_taskmanager)
