"""What each node of a graph is, as rows of text, for hover titles and the widget's selector.

Both views show the same rows, so everything a mouse user can hover over is reachable from
the keyboard too. Every item is keyed by the name its node or cluster has in the DOT text
(the ``*_key`` functions), which is how the SVG element to attach hover text to is found.
"""

from __future__ import annotations

from dataclasses import dataclass

from flowmagic.graph.execution_graph import ExecutionEdge, ExecutionGraph, ExecutionJobVertex, ExecutionVertex
from flowmagic.graph.job_graph import JobEdge, JobGraph, JobVertex
from flowmagic.graph.stream_graph import UNDEFINED, StreamEdge, StreamGraph, StreamNode

__all__ = [
    "NodeDetails",
    "chain_lines",
    "cluster_key",
    "execution_edge_text",
    "execution_graph_details",
    "format_indices",
    "graph_details",
    "hidden_key",
    "job_edge_label",
    "job_edge_text",
    "job_graph_details",
    "job_vertex_key",
    "short_id",
    "stream_edge_label",
    "stream_graph_details",
    "stream_node_key",
    "subtask_details",
    "subtask_key",
]

Graph = StreamGraph | JobGraph | ExecutionGraph
Rows = tuple[tuple[str, str], ...]
UNSET = "(unset)"


@dataclass(frozen=True)
class NodeDetails:
    """One node: its DOT ``key``, the ``label`` a selector lists it under, its ``rows``."""

    key: str
    label: str
    rows: Rows

    def text(self) -> str:
        """The rows as ``name: value`` lines: the hover text."""
        return rows_text(self.rows)


def rows_text(rows: Rows) -> str:
    return "\n".join(f"{name}: {value}" for name, value in rows)


def stream_node_key(node_id: int) -> str:
    return f"n{node_id}"


def job_vertex_key(position: int) -> str:
    """DOT name of the vertex at ``position`` in topological order."""
    return f"v{position}"


def cluster_key(position: int) -> str:
    # Graphviz draws a subgraph as a box only when its name starts with "cluster".
    return f"cluster_{position}"


def subtask_key(position: int, subtask_index: int) -> str:
    return f"s{position}_{subtask_index}"


def hidden_key(position: int) -> str:
    """DOT name of the node standing for the subtasks a collapsed vertex does not draw."""
    return f"s{position}_more"


def short_id(vertex_id: str) -> str:
    """The first 8 hex digits of a vertex id, as Flink's web UI abbreviates it."""
    return vertex_id[:8]


def format_indices(indices: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2, 5"``, so that index lists stay short however wide the job."""
    parts: list[str] = []
    start = 0
    for position, index in enumerate(indices):
        if position + 1 < len(indices) and indices[position + 1] == index + 1:
            continue
        first = indices[start]
        parts.append(str(first) if first == index else f"{first}-{index}")
        start = position + 1
    return ", ".join(parts)


def graph_details(graph: Graph) -> list[NodeDetails]:
    """The selectable nodes of any of the three graphs."""
    if isinstance(graph, StreamGraph):
        return stream_graph_details(graph)
    if isinstance(graph, JobGraph):
        return job_graph_details(graph, graph.sorted_vertices())
    return execution_graph_details(graph)


def _parallelism(parallelism: int, configured: bool) -> str:
    if parallelism <= 0:
        return f"{parallelism}: the adaptive batch scheduler decides"
    return f"{parallelism} (set on the operator)" if configured else str(parallelism)


def _max_parallelism(max_parallelism: int) -> str:
    return str(max_parallelism) if max_parallelism > 0 else f"{UNSET}: the job default applies"


# -- StreamGraph --------------------------------------------------------------------------


def stream_graph_details(graph: StreamGraph) -> list[NodeDetails]:
    """One item per StreamNode, in id order."""
    hashes = graph.operator_hashes
    sources, sinks = set(graph.source_ids), set(graph.sink_ids)
    items = []
    for node in graph.nodes.values():
        rows = [
            ("Name", node.name),
            ("Node id", str(node.id)),
            ("Operator id", hashes[node.id].hex()),
            ("uid", node.uid or UNSET),
            ("uid hash", node.uid_hash or UNSET),
            ("Kind", _kind(node, node.id in sources, node.id in sinks)),
            ("Parallelism", _parallelism(node.parallelism, node.parallelism_configured)),
            ("Max parallelism", _max_parallelism(node.max_parallelism)),
            ("Chaining strategy", str(node.chaining_strategy)),
            ("Slot sharing group", node.slot_sharing_group or UNSET),
        ]
        if node.description is not None:
            rows.append(("Description", node.description))
        if node.call_site:
            rows.append(("Defined at", node.call_site))
        items.append(NodeDetails(stream_node_key(node.id), f"{node.id}: {node.name}", tuple(rows)))
    return items


def _kind(node: StreamNode, source: bool, sink: bool) -> str:
    if source:
        role = f"{node.source_kind or 'new'} source, {'bounded' if node.bounded else 'unbounded'}"
    else:
        role = "sink" if sink else "operator"
    return f"{role} ({node.operator.kind})" if node.operator is not None else role


def stream_edge_label(edge: StreamEdge) -> str:
    """What a StreamEdge carries: partitioner, side-output tag, input side, exchange mode."""
    lines = [str(edge.partitioner)]
    if edge.output_tag:
        lines.append(f"side output '{edge.output_tag}'")
    if edge.type_number:
        lines.append(f"input {edge.type_number}")
    if edge.exchange_mode != UNDEFINED:
        lines.append(edge.exchange_mode)
    return "\n".join(lines)


# -- JobGraph -----------------------------------------------------------------------------


def job_graph_details(graph: JobGraph, order: list[JobVertex]) -> list[NodeDetails]:
    """One item per JobVertex, in ``order`` (the graph's topological order)."""
    items = []
    for position, vertex in enumerate(order):
        rows = [
            ("Name", vertex.name),
            ("Vertex id", vertex.id),
            ("Parallelism", _parallelism(vertex.parallelism, vertex.parallelism_configured)),
            ("Max parallelism", _max_parallelism(vertex.max_parallelism)),
            ("Slot sharing group", vertex.slot_sharing_group),
            ("Task", vertex.invokable),
            *_chained_operator_rows(graph, vertex),
            *((f"Input {number}", job_edge_text(graph, edge)) for number, edge in enumerate(vertex.inputs, 1)),
        ]
        items.append(NodeDetails(job_vertex_key(position), f"{vertex.name} [{short_id(vertex.id)}]", tuple(rows)))
    return items


def _chained_operator_rows(graph: JobGraph, vertex: JobVertex) -> list[tuple[str, str]]:
    hashes = graph.stream_graph.operator_hashes
    rows = []
    for position, node_id in enumerate(vertex.chain, 1):
        node = graph.stream_graph.node(node_id)
        facts = [f"node {node.id}", f"operator id {hashes[node.id].hex()}"]
        if node.uid:
            facts.append(f"uid {node.uid}")
        if node.uid_hash:
            facts.append(f"uid hash {node.uid_hash}")
        facts.append(f"chaining {node.chaining_strategy}")
        rows.append((f"Operator {position}", f"{node.name} ({', '.join(facts)})"))
    return rows


def chain_lines(graph: JobGraph, vertex: JobVertex) -> list[str]:
    """The chained operators in chain order; a chain that forks shows ``+-`` branches."""
    children: dict[int, list[int]] = {}
    for edge in vertex.chained_edges:
        children.setdefault(edge.source_id, []).append(edge.target_id)
    lines = []
    # Iterative so that a chain of thousands of operators cannot exhaust the stack.
    stack = [(vertex.head_node, "", "")]
    while stack:
        node_id, pad, prefix = stack.pop()
        lines.append(pad + prefix + graph.stream_graph.node(node_id).name)
        if prefix == "+- ":
            pad += "   "
        kids = children.get(node_id, [])
        if len(kids) == 1:
            stack.append((kids[0], pad, "→ "))
        else:
            stack.extend((kid, pad + "  ", "+- ") for kid in reversed(kids))
    return lines


def job_edge_text(graph: JobGraph, edge: JobEdge) -> str:
    """A JobEdge on one line: where it comes from and how it is shipped."""
    source = graph.vertex(edge.source_vertex)
    return f"from {source.name} [{short_id(source.id)}]: " + job_edge_label(edge).replace("\n", ", ")


def job_edge_label(edge: JobEdge) -> str:
    """Ship strategy, distribution pattern and result partition type (and side-output tag)."""
    lines = [edge.ship_strategy, edge.distribution_pattern, edge.result_partition_type]
    if edge.stream_edge.output_tag:
        lines.append(f"side output '{edge.stream_edge.output_tag}'")
    return "\n".join(lines)


# -- ExecutionGraph -----------------------------------------------------------------------


def execution_graph_details(graph: ExecutionGraph, *, subtasks: bool = True) -> list[NodeDetails]:
    """One item per ExecutionJobVertex (a cluster of subtasks), in topological order.

    With ``subtasks``, the rows end with one row per subtask saying what it reads.
    """
    items = []
    for position, vertex in enumerate(graph.vertices.values()):
        rows = [
            ("Name", vertex.name),
            ("Vertex id", vertex.id),
            ("Parallelism", str(vertex.parallelism)),
            ("Max parallelism", str(vertex.max_parallelism)),
            ("Slot sharing group", vertex.job_vertex.slot_sharing_group),
            *((f"Input {number}", _input_text(graph, edge)) for number, edge in enumerate(vertex.job_vertex.inputs, 1)),
            *(
                (f"Result {result.id}", f"{result.result_partition_type}, {len(result.partitions)} partitions")
                for result in vertex.produced_results
            ),
        ]
        if subtasks:
            rows.extend((f"Subtask {subtask.index}", _subtask_reads(graph, subtask)) for subtask in vertex.subtasks)
        items.append(NodeDetails(cluster_key(position), f"{vertex.name} [{short_id(vertex.id)}]", tuple(rows)))
    return items


def _input_text(graph: ExecutionGraph, edge: JobEdge) -> str:
    source = graph.vertex(edge.source_vertex)
    exchange = f"{edge.ship_strategy}, {edge.distribution_pattern}"
    return f"from {source.name} [{short_id(source.id)}], p={source.parallelism}: {exchange}"


def _subtask_reads(graph: ExecutionGraph, subtask: ExecutionVertex) -> str:
    if not subtask.inputs:
        return f"{subtask.name} reads no input"
    return f"{subtask.name} reads " + "; ".join(execution_edge_text(graph, edge) for edge in subtask.inputs)


def execution_edge_text(graph: ExecutionGraph, edge: ExecutionEdge) -> str:
    """Which producer subtasks, and which subpartition of each, a subtask reads over an input."""
    first, last = edge.subpartitions
    subpartitions = str(first) if first == last else f"{first}-{last}"
    return (
        f"{graph.vertex(edge.source_vertex).name} subtasks {format_indices(edge.partitions)} "
        f"(subpartition {subpartitions}, {edge.ship_strategy}, {edge.distribution_pattern})"
    )


def subtask_details(graph: ExecutionGraph, vertex: ExecutionJobVertex, subtask: ExecutionVertex) -> Rows:
    """The rows of one subtask: its place in its vertex and what it reads."""
    return (
        ("Subtask", subtask.name),
        ("Subtask index", f"{subtask.index} of {vertex.parallelism}"),
        ("Vertex id", vertex.id),
        ("Max parallelism", str(vertex.max_parallelism)),
        *((f"Input {number}", execution_edge_text(graph, edge)) for number, edge in enumerate(subtask.inputs, 1)),
    )
