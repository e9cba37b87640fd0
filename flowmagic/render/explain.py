"""A pipeline's three graphs as text, in the spirit of Flink's ``EXPLAIN``."""

from __future__ import annotations

from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.graph.job_graph import JobGraph
from flowmagic.graph.stream_graph import StreamGraph
from flowmagic.render.details import chain_lines, short_id, stream_edge_label

__all__ = ["explain"]


def _plural(count: int, noun: str, nouns: str | None = None) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {nouns or noun + 's'}"


def explain(stream_graph: StreamGraph, job_graph: JobGraph, execution_graph: ExecutionGraph) -> str:
    """Three sections: the StreamGraph's nodes and edges, the JobGraph's chains and ship
    strategies, and a summary of the ExecutionGraph's subtasks and connections."""
    return "\n".join([*_stream(stream_graph), "", *_job(job_graph), "", *_execution(execution_graph)]) + "\n"


def _stream(graph: StreamGraph) -> list[str]:
    lines = [
        "== Stream Graph ==",
        f"{graph.job_type}, {_plural(len(graph.nodes), 'node')}, default parallelism {graph.default_parallelism}, "
        f"chaining {'enabled' if graph.chaining_enabled else 'disabled'}",
    ]
    for node in graph.nodes.values():
        lines.append(f"[{node.id}] {node.name} (parallelism {node.parallelism})")
        lines.extend(
            f"  +- {stream_edge_label(edge).replace(chr(10), ', ')} -> [{edge.target_id}] "
            f"{graph.node(edge.target_id).name}"
            for edge in node.out_edges
        )
    return lines


def _job(graph: JobGraph) -> list[str]:
    order = graph.sorted_vertices()
    lines = [
        "== Job Graph ==",
        f"{graph.name!r}, {_plural(len(order), 'vertex', 'vertices')}, {_plural(len(graph.edges), 'edge')}",
    ]
    for vertex in order:
        lines.append(
            f"Vertex {vertex.id} (parallelism {vertex.parallelism}, slot sharing group {vertex.slot_sharing_group!r})"
        )
        lines.extend(f"  {line}" for line in chain_lines(graph, vertex))
        for edge in vertex.inputs:
            source = graph.vertex(edge.source_vertex)
            lines.append(
                f"  <- {edge.ship_strategy} {edge.distribution_pattern} {edge.result_partition_type} "
                f"from {short_id(source.id)} {source.name}"
            )
    return lines


def _execution(graph: ExecutionGraph) -> list[str]:
    lines = [
        "== Execution Graph ==",
        f"{_plural(len(graph.vertices), 'job vertex', 'job vertices')}, {_plural(graph.num_subtasks, 'subtask')}",
    ]
    for vertex in graph.vertices.values():
        lines.append(
            f"{vertex.name}: {_plural(vertex.parallelism, 'subtask')}, max parallelism {vertex.max_parallelism}"
        )
        for number, edge in enumerate(vertex.job_vertex.inputs):
            connections = sum(len(subtask.inputs[number].partitions) for subtask in vertex.subtasks)
            source = graph.vertex(edge.source_vertex)
            lines.append(
                f"  <- {edge.ship_strategy} {edge.distribution_pattern} from {source.name}: "
                f"{source.parallelism} -> {vertex.parallelism} subtasks, {_plural(connections, 'connection')}"
            )
    return lines
