"""What each node of a graph is, as rows of text, for hover titles and the widget's selector.

Both views show the same rows, so everything a mouse user can hover over is reachable from
the keyboard too. Every item is keyed by the name its node or cluster has in the DOT text
(the ``*_key`` functions), which is how the SVG element to attach hover text to is found.
"""

from __future__ import annotations

from dataclasses import dataclass

from flowmagic.graph.execution_graph import ExecutionEdge, ExecutionGraph, ExecutionJobVertex, ExecutionVertex
from flowmagic.graph.job_graph import JobEdge, JobGraph, JobVertex
from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.physical_graph import ChannelKind, PhysicalGraph, PhysicalTask, Slot
from flowmagic.graph.stream_graph import UNDEFINED, StreamEdge, StreamGraph, StreamNode

__all__ = [
    "NodeDetails",
    "chain_lines",
    "cluster_key",
    "counted",
    "execution_edge_text",
    "execution_graph_details",
    "format_indices",
    "graph_details",
    "hidden_key",
    "job_edge_label",
    "job_edge_text",
    "job_graph_details",
    "job_vertex_key",
    "physical_graph_details",
    "physical_slot_rows",
    "physical_task_rows",
    "short_id",
    "slot_demand",
    "slot_key",
    "stream_edge_label",
    "stream_graph_details",
    "stream_node_key",
    "subtask_details",
    "subtask_key",
    "task_key",
    "task_summary",
    "taskmanager_key",
]

Graph = StreamGraph | JobGraph | ExecutionGraph | PhysicalGraph
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
    """The selectable nodes of any of the four graphs."""
    if isinstance(graph, StreamGraph):
        return stream_graph_details(graph)
    if isinstance(graph, JobGraph):
        return job_graph_details(graph, graph.sorted_vertices())
    if isinstance(graph, PhysicalGraph):
        return physical_graph_details(graph)
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
        plan_node = sql_plan_node(node)
        if plan_node is not None:
            rows.append(("SQL plan node", plan_node))
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
        plan_node = sql_plan_node(node)
        if plan_node is not None:
            facts.append(f"from SQL plan node {plan_node}")
        rows.append((f"Operator {position}", f"{node.name} ({', '.join(facts)})"))
    return rows


def sql_plan_node(node: StreamNode) -> str | None:
    """The line of the SQL statement's Optimized Execution Plan an operator came from
    (``ExecNode [3] GroupAggregate(...)``), None for a DataStream operator."""
    params = node.operator.params if node.operator is not None else None
    if not isinstance(params, SqlOperatorParams):
        return None
    return f"ExecNode [{params.exec_node_id}] {params.description}"


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


# -- Physical graph -----------------------------------------------------------------------


def taskmanager_key(taskmanager: int) -> str:
    return f"cluster_tm{taskmanager}"


def slot_key(slot: int) -> str:
    return f"cluster_slot{slot}"


def task_key(slot: int, position: int) -> str:
    """DOT name of the task in ``slot`` of the job vertex at ``position`` (topological order)."""
    return f"t{slot}_{position}"


def counted(count: int, noun: str) -> str:
    """``1 gate``, ``2 gates``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def task_summary(task: PhysicalTask) -> str:
    """What a task reads (gates, channels) and writes (partitions, subpartitions), on one line."""
    parts = []
    if task.gates:
        channels = [channel for gate in task.gates for channel in gate.channels]
        kinds = [
            f"{count} {kind.value.lower()}"
            for kind in ChannelKind
            if (count := sum(1 for channel in channels if channel.kind is kind))
        ]
        parts.append(
            f"in: {counted(len(task.gates), 'gate')}, {counted(len(channels), 'channel')} ({', '.join(kinds)})"
        )
    if task.partitions:
        subpartitions = sum(partition.subpartitions for partition in task.partitions)
        parts.append(f"out: {counted(len(task.partitions), 'partition')}, {counted(subpartitions, 'subpartition')}")
    return "; ".join(parts) or "no inputs or outputs"


def physical_task_rows(graph: PhysicalGraph, task: PhysicalTask) -> Rows:
    """The rows of one task: where it runs, what it writes and what it reads."""
    slot = graph.slots[task.slot]
    where = (
        "nowhere: the cluster has too few slots" if slot.taskmanager is None else f"TaskManager {slot.taskmanager + 1}"
    )
    rows = [
        ("Task", task.name),
        ("Vertex id", task.vertex_id),
        ("Slot", f"{task.slot + 1} (slot sharing group {slot.group!r})"),
        ("Runs in", where),
    ]
    for number, partition in enumerate(task.partitions, 1):
        consumer = graph.vertex_names.get(partition.consumer_vertex, partition.consumer_vertex)
        rows.append(
            (
                f"ResultPartition {number}",
                f"{partition.partition_type}, {counted(partition.subpartitions, 'subpartition')}, read by {consumer}",
            )
        )
    for number, gate in enumerate(task.gates, 1):
        source = graph.vertex_names.get(gate.source_vertex, gate.source_vertex)
        kinds = ", ".join(f"{gate.count(kind)} {kind.value.lower()}" for kind in ChannelKind if gate.count(kind))
        producers = format_indices([channel.producer_subtask for channel in gate.channels])
        rows.append(
            (
                f"InputGate {number}",
                f"{gate.ship_strategy} from {source} subtasks {producers}: "
                f"{counted(len(gate.channels), 'channel')} ({kinds})",
            )
        )
    return tuple(rows)


def slot_demand(graph: PhysicalGraph) -> tuple[str, str]:
    """Where :attr:`PhysicalGraph.slots_needed` comes from, and why: two phrases."""
    if graph.sequential_regions:
        return (
            f"the largest of {graph.sequential_regions} pipelined regions",
            "blocking exchanges: regions run one after another, in the slots earlier ones freed",
        )
    demand = " + ".join(f"{group.slots} ({group.name})" for group in graph.groups)
    return demand, "per slot sharing group, its highest parallelism"


def physical_slot_rows(graph: PhysicalGraph, slot: Slot) -> Rows:
    """The rows of one slot: where it is, its group, and each task it holds."""
    where = "not placed" if slot.taskmanager is None else f"TaskManager {slot.taskmanager + 1}"
    rows = [("Slot", f"{slot.index + 1}, {where}"), ("Slot sharing group", slot.group)]
    for vertex_id, index in slot.tasks:
        task = graph.task(vertex_id, index)
        rows.append((task.name, task_summary(task)))
    return tuple(rows)


def physical_graph_details(graph: PhysicalGraph) -> list[NodeDetails]:
    """The job's slot demand first, then one item per slot with the tasks it holds."""
    summary: list[tuple[str, str]] = [
        ("Job", graph.job_name),
        (
            "Cluster",
            f"{graph.taskmanagers} TaskManagers x {graph.slots_per_taskmanager} slots = {graph.slots_available}",
        ),
        ("Slots needed", "{} = {}: {}".format(graph.slots_needed, *slot_demand(graph))),
        ("Channels", ", ".join(f"{count} {kind.lower()}" for kind, count in graph.channel_counts().items())),
    ]
    if graph.error is not None:
        summary.append(("Error", f"NoResourceAvailableException: {graph.error}"))
    items = [NodeDetails("job", f"{graph.job_name}: {graph.slots_needed} slots", tuple(summary))]
    for slot in graph.slots:
        where = "not placed" if slot.taskmanager is None else f"TaskManager {slot.taskmanager + 1}"
        items.append(
            NodeDetails(
                slot_key(slot.index), f"Slot {slot.index + 1} ({where}, {slot.group})", physical_slot_rows(graph, slot)
            )
        )
    return items
