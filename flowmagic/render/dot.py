"""The three graphs as Graphviz DOT text: one function per level.

The output is deterministic (same graph, same text) and every piece of user text goes
through :func:`quote`, so names with quotes, backslashes, ``<``/``>``, ``&``, newlines or
emoji show literally and cannot break out of their label. Labels are plain quoted strings,
not HTML-like labels: the WebAssembly Graphviz on PyPI is built without the expat parser
that HTML-like labels need, and the pictures must not depend on which Graphviz ran.

Hover details are not written as ``tooltip`` attributes: Graphviz substitutes ``\\N``,
``\\G``... inside tooltips however their backslashes are escaped, so a name containing
them would be altered. Instead each :class:`DotGraph` carries its hover texts by DOT name,
and :func:`flowmagic.render.layout.set_titles` writes them into the SVG ``<title>``
elements, which browsers show on hover without any script.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from flowmagic.graph.execution_graph import ExecutionGraph, ExecutionJobVertex
from flowmagic.graph.job_graph import ALL_TO_ALL, JobEdge, JobGraph
from flowmagic.graph.physical_graph import ChannelKind, PhysicalGraph, PhysicalTask, Slot
from flowmagic.graph.spark_placement import SparkChannel, SparkPlacement
from flowmagic.graph.stream_graph import StreamGraph
from flowmagic.render.details import (
    chain_lines,
    cluster_key,
    counted,
    execution_graph_details,
    format_indices,
    hidden_key,
    job_edge_label,
    job_edge_text,
    job_graph_details,
    physical_slot_rows,
    physical_task_rows,
    rows_text,
    short_id,
    slot_demand,
    slot_key,
    stream_edge_label,
    stream_graph_details,
    stream_node_key,
    subtask_details,
    subtask_key,
    task_key,
    task_summary,
    taskmanager_key,
)

__all__ = [
    "BUNDLE_ABOVE",
    "COLLAPSE_ABOVE",
    "COLLAPSE_SLOTS_ABOVE",
    "DETAIL_TASKS_ABOVE",
    "SPARK_TASKS_ABOVE",
    "STATE_FILLS",
    "DotGraph",
    "execution_graph_to_dot",
    "job_graph_to_dot",
    "load_colours",
    "physical_graph_to_dot",
    "printable",
    "quote",
    "record_colour",
    "spark_placement_to_dot",
    "stream_graph_to_dot",
    "to_dot",
]

#: ALL_TO_ALL exchanges with more subtask-to-subtask connections than this are drawn as one
#: edge: 4 x 4 is drawn wire by wire, 8 -> 4 (32 wires) is one edge, whatever the partitioner.
BUNDLE_ABOVE = 16
#: Vertices with more subtasks than this are drawn collapsed (see :func:`execution_graph_to_dot`).
COLLAPSE_ABOVE = 8

# Light fills with dark text read the same on light and dark pages; one fill per slot
# sharing group, in order of first appearance.
_GROUP_FILLS = ("#dbeafe", "#dcfce7", "#fef3c7", "#fce7f3", "#ede9fe", "#cffafe", "#fee2e2", "#e5e7eb")
_HEADER = (
    'graph [rankdir=LR, bgcolor="white", fontname="Helvetica", fontsize=10, nodesep=0.2, ranksep=0.5, pad=0.1];\n'
    'node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, color="#4b5563", '
    'fontcolor="#111827", penwidth=1, margin="0.1,0.05"];\n'
    'edge [color="#4b5563", fontname="Helvetica", fontsize=8, fontcolor="#374151", arrowsize=0.6];\n'
)
_CLUSTER_STYLE = 'style="rounded,filled"; fillcolor="#f3f4f6"; color="#9ca3af"; fontsize=10'
# C0 controls (but tab and newline), DEL and lone surrogates: not valid in SVG text.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")


@dataclass(frozen=True)
class DotGraph:
    """DOT ``source`` plus the hover text of its nodes, clusters and edges by DOT name.

    Edges are keyed ``"tail->head"``; parallel edges between the same two nodes share a key
    (they share one SVG title too) and their texts are joined.
    """

    source: str
    titles: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __str__(self) -> str:
        return self.source


def printable(text: str) -> str:
    """``text`` with line breaks as ``\\n``, tabs as spaces and characters that cannot appear in
    an SVG document (other control characters, lone surrogates) as U+FFFD."""
    return _UNPRINTABLE.sub("\ufffd", text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " "))


def quote(text: str) -> str:
    """``text`` as a quoted DOT string that Graphviz shows literally in a label.

    Graphviz decodes HTML entities in labels and then backslash escapes, so ``&`` and ``\\``
    are escaped; newlines become ``\\n`` line breaks.
    """
    text = printable(text)
    text = text.replace("&", "&amp;").replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


def _left(lines: Iterable[str]) -> str:
    # "\l" ends a left-justified line: chains read like a list, not a centred poem.
    return '"' + "".join(quote(line)[1:-1] + "\\l" for line in lines) + '"'


class _Writer:
    """Collects DOT statements and hover titles."""

    def __init__(self, name: str, extra: str = ""):
        self.parts = [f"digraph {name} {{\n", _HEADER, extra]
        self.titles: dict[str, str] = {}

    def title(self, key: str, text: str) -> None:
        self.titles[key] = f"{self.titles[key]}\n\n{text}" if key in self.titles else text

    def line(self, statement: str) -> None:
        self.parts.append(statement + "\n")

    def done(self) -> DotGraph:
        self.parts.append("}\n")
        return DotGraph("".join(self.parts), self.titles)


def _group_fills(groups: Iterable[str]) -> dict[str, str]:
    fills: dict[str, str] = {}
    for group in groups:
        fills.setdefault(group, _GROUP_FILLS[len(fills) % len(_GROUP_FILLS)])
    return fills


def _parallelism(parallelism: int) -> str:
    # BATCH jobs leave unset parallelism to the adaptive scheduler.
    return f"p={parallelism}" if parallelism > 0 else "p=auto"


def _in_groups(writer: _Writer, members: list[tuple[str, str]]) -> None:
    """Write ``(group, statement)`` node statements, boxed per slot sharing group if several."""
    groups = list(dict.fromkeys(group for group, _ in members))
    if len(groups) == 1:
        for _, statement in members:
            writer.line(statement)
        return
    for position, group in enumerate(groups):
        key = f"cluster_group_{position}"
        writer.line(f"subgraph {key} {{")
        writer.line(f'label={quote(f"slot sharing group {group!r}")}; style="rounded,dashed"; color="#9ca3af";')
        writer.title(key, f"Slot sharing group: {group}")
        for member_group, statement in members:
            if member_group == group:
                writer.line(statement)
        writer.line("}")


def stream_graph_to_dot(graph: StreamGraph) -> DotGraph:
    """One node per StreamNode (name, id, parallelism), edges labelled with their partitioner.

    Side-output edges are dashed and name their tag; slot sharing groups have their own fill
    colour and, when there are several, their own box.
    """
    writer = _Writer('"StreamGraph"')
    details = {item.key: item for item in stream_graph_details(graph)}
    fills = _group_fills(str(node.slot_sharing_group) for node in graph.nodes.values())
    members = []
    for node in graph.nodes.values():
        key = stream_node_key(node.id)
        group = str(node.slot_sharing_group)
        label = quote(f"{node.name}\nid {node.id} · {_parallelism(node.parallelism)}")
        members.append((group, f'{key} [label={label}, fillcolor="{fills[group]}"];'))
        writer.title(key, details[key].text())
    _in_groups(writer, members)
    for edge in graph.edges:
        tail, head = stream_node_key(edge.source_id), stream_node_key(edge.target_id)
        label = stream_edge_label(edge)
        style = ", style=dashed" if edge.output_tag else ""
        writer.line(f"{tail} -> {head} [label={quote(label)}{style}];")
        source, target = graph.node(edge.source_id), graph.node(edge.target_id)
        facts = label.replace("\n", ", ")
        writer.title(f"{tail}->{head}", f"{source.label} -> {target.label}: {facts}")
    return writer.done()


#: Fills of a running job's vertices by state, in the spirit of Flink's web UI.
STATE_FILLS = {
    "CREATED": "#f3f4f6",
    "SCHEDULED": "#e5e7eb",
    "DEPLOYING": "#fef9c3",
    "INITIALIZING": "#fef3c7",
    "RUNNING": "#bfdbfe",
    "FINISHED": "#bbf7d0",
    "CANCELING": "#fed7aa",
    "CANCELED": "#d1d5db",
    "FAILED": "#fecaca",
}


# Flink's web UI's vertex colours (its JobGraph's node component): fill and border of an
# idle vertex, blended towards busy's by the busy percentage, then towards back-pressured's
# by the back-pressured percentage.
_IDLE_COLOURS = ("#5db1ff", "#1890ff")
_BUSY_COLOURS = ("#ee6464", "#ee2222")
_BACKPRESSURED_COLOURS = ("#888888", "#000000")


def _blend(start: str, end: str, share: float) -> str:
    # Rounded half up, as JavaScript's Math.round rounds the web UI's (round() would halve to even).
    channels = (
        math.floor(int(start[i : i + 2], 16) + (int(end[i : i + 2], 16) - int(start[i : i + 2], 16)) * share + 0.5)
        for i in (1, 3, 5)
    )
    return "#" + "".join(f"{channel:02x}" for channel in channels)


def load_colours(busy_percent: float, backpressured_percent: float) -> tuple[str, str]:
    """The fill and border colour Flink's web UI gives a vertex whose busiest subtask is busy
    ``busy_percent`` of the time and whose most back-pressured one is back-pressured
    ``backpressured_percent`` of it: blue when idle, red when busy, grey when back-pressured."""
    busy = min(max(busy_percent, 0.0), 100.0) / 100
    pressured = min(max(backpressured_percent, 0.0), 100.0) / 100
    return tuple(  # type: ignore[return-value]
        _blend(_blend(idle, loaded, busy), pressed, pressured)
        for idle, loaded, pressed in zip(_IDLE_COLOURS, _BUSY_COLOURS, _BACKPRESSURED_COLOURS, strict=True)
    )


def job_graph_to_dot(
    graph: JobGraph,
    states: Mapping[str, str] | None = None,
    load: Mapping[str, tuple[float, float]] | None = None,
) -> DotGraph:
    """One node per JobVertex listing its chained operators in order, its short id and
    parallelism; edges labelled with ship strategy, distribution pattern and partition type.

    With ``states`` (vertex id -> ExecutionState name), each vertex is filled by its state
    and names it, as Flink's web UI colours a running job. With ``load`` (vertex id -> its
    busy and back-pressured percentage, see :func:`load_colours`), the vertices measured are
    coloured by it instead, and show both figures, as Flink's web UI does.
    """
    writer = _Writer('"JobGraph"')
    order = graph.sorted_vertices()
    items = job_graph_details(graph, order)
    keys = {vertex.id: item.key for vertex, item in zip(order, items, strict=True)}
    fills = _group_fills(vertex.slot_sharing_group for vertex in order)
    members = []
    for vertex, item in zip(order, items, strict=True):
        lines = [*chain_lines(graph, vertex), f"{short_id(vertex.id)} · {_parallelism(vertex.parallelism)}"]
        fill = fills[vertex.slot_sharing_group]
        if states is not None:
            state = states.get(vertex.id, "CREATED")
            lines.append(state)
            fill = STATE_FILLS.get(state, fill)
        border = ""
        figures = None if load is None else load.get(vertex.id)
        if figures is not None:
            busy, pressured = figures
            lines += [f"Backpressured (max): {pressured:.0f}%", f"Busy (max): {busy:.0f}%"]
            fill, colour = load_colours(busy, pressured)
            border = f', color="{colour}", penwidth=2'
        members.append((vertex.slot_sharing_group, f'{item.key} [label={_left(lines)}, fillcolor="{fill}"{border}];'))
        writer.title(item.key, item.text())
    _in_groups(writer, members)
    for vertex in order:
        for edge in vertex.inputs:
            tail, head = keys[edge.source_vertex], keys[vertex.id]
            writer.line(f"{tail} -> {head} [label={quote(job_edge_label(edge))}];")
            writer.title(f"{tail}->{head}", f"{job_edge_text(graph, edge)} -> {vertex.name}")
    return writer.done()


def _shown_subtasks(parallelism: int, collapse_above: int | None) -> list[int | None]:
    """The subtask indices drawn for a vertex, top to bottom; ``None`` stands for the hidden ones.

    Up to ``collapse_above`` subtasks are all drawn; past it, the first three and the last one,
    with one node for those in between: the box stays a few nodes tall however wide the job.
    """
    if collapse_above is None or parallelism <= collapse_above:
        return list(range(parallelism))
    return [0, 1, 2, None, parallelism - 1]


def execution_graph_to_dot(
    graph: ExecutionGraph, *, bundle_above: int = BUNDLE_ABOVE, collapse_above: int | None = COLLAPSE_ABOVE
) -> DotGraph:
    """Each ExecutionJobVertex as a box of its subtasks ``Name (i/p)``.

    POINTWISE exchanges are drawn wire by wire. ALL_TO_ALL exchanges are too, up to
    ``bundle_above`` connections, whatever their partitioner; past it they become one bold
    edge between the two boxes, labelled with the producer and consumer parallelism.

    A vertex of more than ``collapse_above`` subtasks (``None``: no limit) shows its first
    three and its last, and one ``… n more`` node for the others, which stands in for them in
    the wiring: its edges are dashed and say how many connections they carry.
    """
    # compound: bundled edges end at the cluster borders. remincross=false: the final
    # crossing-reduction pass over the whole graph would undo the subtask order below.
    writer = _Writer('"ExecutionGraph"', "compound=true; remincross=false;\n")
    positions = {vertex_id: position for position, vertex_id in enumerate(graph.vertices)}
    fills = _group_fills(vertex.job_vertex.slot_sharing_group for vertex in graph.vertices.values())
    clusters = execution_graph_details(graph, subtasks=False)
    # Per vertex position: subtask index -> the DOT name of the node that draws it.
    drawn_by: list[dict[int, str]] = []
    for position, (vertex, item) in enumerate(zip(graph.vertices.values(), clusters, strict=True)):
        label = quote(f"{vertex.name}\n{short_id(vertex.id)} · p={vertex.parallelism}")
        writer.line(f"subgraph {item.key} {{")
        writer.line(f"label={label}; {_CLUSTER_STYLE};")
        writer.title(item.key, item.text())
        fill = fills[vertex.job_vertex.slot_sharing_group]
        shown = _shown_subtasks(vertex.parallelism, collapse_above)
        hidden = sorted(set(range(vertex.parallelism)) - {index for index in shown if index is not None})
        keys = {}
        order = []
        for index in shown:
            if index is None:
                key = hidden_key(position)
                text = f"… {len(hidden)} more\n({hidden[0] + 1}-{hidden[-1] + 1}/{vertex.parallelism})"
                writer.line(f'{key} [label={quote(text)}, fillcolor="{fill}", style="rounded,filled,dashed"];')
                writer.title(
                    key,
                    f"{len(hidden)} subtasks not drawn: {vertex.subtasks[hidden[0]].name} to "
                    f"{vertex.subtasks[hidden[-1]].name}",
                )
                keys.update(dict.fromkeys(hidden, key))
            else:
                key = subtask_key(position, index)
                writer.line(f'{key} [label={quote(vertex.subtasks[index].name)}, fillcolor="{fill}"];')
                writer.title(key, rows_text(subtask_details(graph, vertex, vertex.subtasks[index])))
                keys[index] = key
            order.append(key)
        if len(order) > 1:
            # Subtasks top to bottom in index order: invisible edges within one rank fix it
            # (with rankdir=LR a flat edge puts its tail below its head, hence reversed).
            writer.line(f"{{rank=same; {' -> '.join(reversed(order))} [style=invis];}}")
        writer.line("}")
        drawn_by.append(keys)
    for position, vertex in enumerate(graph.vertices.values()):
        for number, job_edge in enumerate(vertex.job_vertex.inputs):
            source = graph.vertex(job_edge.source_vertex)
            tail_position = positions[source.id]
            wires = [
                (partition, subtask) for subtask in vertex.subtasks for partition in subtask.inputs[number].partitions
            ]
            if job_edge.distribution_pattern == ALL_TO_ALL and len(wires) > bundle_above:
                _bundle(writer, job_edge, source, vertex, drawn_by, tail_position, position, len(wires))
                continue
            # Wires between the same two drawn nodes (those of hidden subtasks) are one edge.
            edges: dict[tuple[str, str], list[str]] = {}
            for partition, subtask in wires:
                tail, head = drawn_by[tail_position][partition], drawn_by[position][subtask.index]
                reads = subtask.inputs[number]
                first, last = reads.subpartitions
                subpartitions = str(first) if first == last else f"{first}-{last}"
                edges.setdefault((tail, head), []).append(
                    f"{source.subtasks[partition].name} -> {subtask.name}: {job_edge.ship_strategy}, "
                    f"{job_edge.distribution_pattern}, subpartition {subpartitions}"
                )
            middle = len(edges) // 2
            for index, ((tail, head), texts) in enumerate(edges.items()):
                # One label per exchange is enough; the hover title names every wire.
                lines = [job_edge.ship_strategy] if index == middle else []
                attributes = []
                if len(texts) > 1:
                    lines.append(f"{len(texts)} wires")
                    attributes.append("style=dashed")
                if lines:
                    label = quote("\n".join(lines))
                    attributes.insert(0, f"label={label}")
                listed = f" [{', '.join(attributes)}]" if attributes else ""
                writer.line(f"{tail} -> {head}{listed};")
                writer.title(f"{tail}->{head}", "\n".join(texts))
    return writer.done()


def _bundle(
    writer: _Writer,
    job_edge: JobEdge,
    source: ExecutionJobVertex,
    vertex: ExecutionJobVertex,
    drawn_by: list[dict[int, str]],
    tail_position: int,
    position: int,
    connections: int,
) -> None:
    """One bold edge from box to box for an ALL_TO_ALL exchange, between middle nodes."""
    tail = drawn_by[tail_position][source.parallelism // 2]
    head = drawn_by[position][vertex.parallelism // 2]
    label = f"{job_edge.ship_strategy}\nALL_TO_ALL {source.parallelism}x{vertex.parallelism}"
    writer.line(
        f"{tail} -> {head} [label={quote(label)}, ltail={cluster_key(tail_position)}, "
        f"lhead={cluster_key(position)}, penwidth=2.5];"
    )
    writer.title(
        f"{tail}->{head}",
        f"{source.name} -> {vertex.name}: {job_edge.ship_strategy}, ALL_TO_ALL, every one of "
        f"{source.parallelism} subtasks to each of {vertex.parallelism} ({connections} connections)",
    )


#: Jobs with more slots than this draw the first three and the last, and one node for the rest.
COLLAPSE_SLOTS_ABOVE = 16
#: Up to this many drawn tasks, each task is a node wired channel by channel; past it, each slot
#: is one node listing its tasks, wired slot to slot.
DETAIL_TASKS_ABOVE = 40
# Tasks a slot node lists before "… n more tasks".
_LISTED_TASKS = 8


def physical_graph_to_dot(
    graph: PhysicalGraph, *, all_slots: bool = False, bundle_above: int = BUNDLE_ABOVE
) -> DotGraph:
    """TaskManagers as boxes of their slots, each slot holding the tasks deployed into it
    (filled by slot sharing group), and the channels between tasks: solid when local (same
    TaskManager), dashed and bold when remote.

    A job of more than :data:`COLLAPSE_SLOTS_ABOVE` slots shows its first three slots and its
    last (all with ``all_slots``); the others are one ``… n more slots`` node per TaskManager,
    and TaskManagers with none shown one ``… n more TaskManagers`` node, which stand in for
    their tasks in the wiring. Up to :data:`DETAIL_TASKS_ABOVE` drawn tasks, every task is a
    node and every exchange is wired task to task (TaskManager to TaskManager past
    ``bundle_above`` channels); past it, a slot is one node listing its tasks and the channels
    are counted slot to slot. A job the cluster has too few slots for is drawn as Flink's error.
    """
    return _PhysicalDrawing(graph, all_slots, bundle_above).dot()


class _PhysicalDrawing:
    """The state of one physical graph's drawing: which slots are drawn, and how."""

    def __init__(self, graph: PhysicalGraph, all_slots: bool, bundle_above: int):
        self.graph = graph
        self.bundle_above = bundle_above
        self.writer = _Writer('"Physical"', "compound=true;\n")
        count = len(graph.slots)
        self.shown = set(range(count)) if all_slots or count <= COLLAPSE_SLOTS_ABOVE else {0, 1, 2, count - 1}
        self.detailed = sum(len(graph.slots[index].tasks) for index in self.shown) <= DETAIL_TASKS_ABOVE
        self.fills = _group_fills(group.name for group in graph.groups)
        self.positions = {vertex_id: position for position, vertex_id in enumerate(graph.vertex_names)}
        # The node that stands for each task in the wiring, and each TaskManager's first node.
        self.anchor: dict[tuple[str, int], str] = {}
        self.first_node: dict[int, str] = {}

    def dot(self) -> DotGraph:
        graph, writer = self.graph, self.writer
        demand, why = slot_demand(graph)
        cluster = f"{graph.taskmanagers} TaskManagers x {graph.slots_per_taskmanager} slots"
        if graph.error is not None:
            text = (
                f"NoResourceAvailableException: {graph.error}\n\nThe job needs {graph.slots_needed} slots = "
                f"{demand}\n({why});\nthe cluster has {cluster} = {graph.slots_available}."
            )
            writer.line(f'error [label={quote(text)}, shape=note, fillcolor="#fecaca"];')
            writer.title("error", text)
            return writer.done()
        legend = "solid: local channel, dashed: remote channel"
        writer.line(
            f"label={quote(f'{graph.slots_needed} slots needed = {demand} · {cluster} · {legend}')}; labelloc=t;"
        )
        by_taskmanager: dict[int, list[Slot]] = {}
        for slot in graph.slots:
            assert slot.taskmanager is not None
            by_taskmanager.setdefault(slot.taskmanager, []).append(slot)
        drawn = [
            tm
            for tm in range(graph.taskmanagers)
            if any(slot.index in self.shown for slot in by_taskmanager.get(tm, []))
            or (tm not in by_taskmanager and graph.taskmanagers <= COLLAPSE_SLOTS_ABOVE)
        ]
        for tm in drawn:
            self._taskmanager(tm, by_taskmanager.get(tm, []))
        rest = [tm for tm in range(graph.taskmanagers) if tm not in drawn]
        if rest:
            slots = [slot for tm in rest for slot in by_taskmanager.get(tm, [])]
            tasks = sum(len(slot.tasks) for slot in slots)
            text = f"… {len(rest)} more TaskManagers\n({len(slots)} slots used, {tasks} tasks)"
            writer.line(f'more_tms [label={quote(text)}, style="rounded,dashed"];')
            writer.title("more_tms", text.replace("\n", " "))
            for slot in slots:
                self.anchor.update(dict.fromkeys(slot.tasks, "more_tms"))
        self._edges()
        return writer.done()

    def _taskmanager(self, tm: int, slots: list[Slot]) -> None:
        graph, writer = self.graph, self.writer
        key = taskmanager_key(tm)
        used = f"TaskManager {tm + 1} · {len(slots)} of {graph.slots_per_taskmanager} slots used"
        writer.line(f"subgraph {key} {{")
        writer.line(f"label={quote(used)}; {_CLUSTER_STYLE};")
        writer.title(key, used)
        hidden = [slot for slot in slots if slot.index not in self.shown]
        for slot in slots:
            if slot.index in self.shown:
                node = self._slot(slot) if self.detailed else self._slot_node(slot)
                self.first_node.setdefault(tm, node)
        if hidden:
            more = f"more_tm{tm}"
            tasks = sum(len(slot.tasks) for slot in hidden)
            text = f"… {counted(len(hidden), 'more slot')}\n({counted(tasks, 'task')})"
            writer.line(f'{more} [label={quote(text)}, style="rounded,dashed"];')
            writer.title(more, f"Slots {format_indices([slot.index + 1 for slot in hidden])}: {tasks} tasks not drawn")
            for slot in hidden:
                self.anchor.update(dict.fromkeys(slot.tasks, more))
            self.first_node.setdefault(tm, more)
        free = graph.slots_per_taskmanager - len(slots)
        if free:
            node = f"free_tm{tm}"
            text = counted(free, "free slot")
            writer.line(f'{node} [label={quote(text)}, style="rounded,dashed"];')
            writer.title(node, f"TaskManager {tm + 1}: {text}, which the job does not use")
            self.first_node.setdefault(tm, node)
        writer.line("}")

    def _slot(self, slot: Slot) -> str:
        """A slot as a box of task nodes; returns its first node."""
        graph, writer = self.graph, self.writer
        key = slot_key(slot.index)
        assert slot.slot_index is not None
        writer.line(f"subgraph {key} {{")
        label = f"slot {slot.slot_index + 1} · {slot.group}"
        writer.line(f'label={quote(label)}; style="rounded,filled"; fillcolor="#ffffff"; color="#9ca3af"; fontsize=9;')
        writer.title(key, rows_text(physical_slot_rows(graph, slot)))
        for vertex_id, index in slot.tasks:
            task = graph.task(vertex_id, index)
            node = task_key(slot.index, self.positions[vertex_id])
            label = quote(f"{task.name}\n{task_summary(task).replace('; ', chr(10))}")
            writer.line(f'{node} [label={label}, fillcolor="{self.fills[slot.group]}"];')
            writer.title(node, rows_text(physical_task_rows(graph, task)))
            self.anchor[(vertex_id, index)] = node
        writer.line("}")
        return self.anchor[slot.tasks[0]]

    def _slot_node(self, slot: Slot) -> str:
        """A slot as one node listing its tasks."""
        graph = self.graph
        key = f"slot{slot.index}"
        assert slot.slot_index is not None
        names = [graph.task(vertex_id, index).name for vertex_id, index in slot.tasks]
        if len(names) > _LISTED_TASKS:
            names = [*names[: _LISTED_TASKS - 1], f"… {len(names) - _LISTED_TASKS + 1} more tasks"]
        inside = sum(
            1
            for vertex_id, index in slot.tasks
            for gate in graph.task(vertex_id, index).gates
            for channel in gate.channels
            if graph.task(gate.source_vertex, channel.producer_subtask).slot == slot.index
        )
        lines = [f"slot {slot.slot_index + 1} · {slot.group}", *names, f"{counted(inside, 'channel')} inside the slot"]
        self.writer.line(f'{key} [label={_left(lines)}, fillcolor="{self.fills[slot.group]}"];')
        self.writer.title(key, rows_text(physical_slot_rows(graph, slot)))
        self.anchor.update(dict.fromkeys(slot.tasks, key))
        return key

    def _edges(self) -> None:
        """Per exchange (job edge), one edge per pair of drawn nodes and channel kind."""
        graph = self.graph
        exchanges: dict[tuple[str, str, str], list[tuple[PhysicalTask, PhysicalTask, ChannelKind]]] = {}
        for task in graph.tasks.values():
            for gate in task.gates:
                wires = exchanges.setdefault((gate.source_vertex, task.vertex_id, gate.ship_strategy), [])
                for channel in gate.channels:
                    wires.append((graph.task(gate.source_vertex, channel.producer_subtask), task, channel.kind))
        merged: dict[tuple[str, str, ChannelKind], list[str]] = {}
        for (source, target, strategy), wires in exchanges.items():
            names = f"{graph.vertex_names[source]} -> {graph.vertex_names[target]}: {strategy}"
            drawn = sum(1 for producer, consumer, _ in wires if self._drawn(producer) and self._drawn(consumer))
            bundled = self.detailed and drawn > self.bundle_above
            edges: dict[tuple[str, str, ChannelKind], int] = {}
            for producer, consumer, kind in wires:
                tail, head = self._anchor(producer, bundled), self._anchor(consumer, bundled)
                if tail == head and not self.detailed:
                    continue  # inside one slot: counted in its label
                if tail == head and bundled:
                    continue  # inside one TaskManager of a bundled exchange
                edges[(tail, head, kind)] = edges.get((tail, head, kind), 0) + 1
            for (tail, head, kind), count in edges.items():
                text = f"{names}, {counted(count, kind.value.lower() + ' channel')}"
                if self.detailed:
                    self._edge(tail, head, kind, count, bundled, text)
                else:
                    merged.setdefault((tail, head, kind), []).append(text)
        for (tail, head, kind), texts in merged.items():
            count = sum(int(text.rsplit(", ", 1)[1].split()[0]) for text in texts)
            self._edge(tail, head, kind, count, False, "\n".join(texts))

    def _drawn(self, task: PhysicalTask) -> bool:
        return task.slot in self.shown

    def _anchor(self, task: PhysicalTask, bundled: bool) -> str:
        if bundled and self._drawn(task):
            taskmanager = self.graph.taskmanager_of(task)
            assert taskmanager is not None
            return self.first_node[taskmanager]
        return self.anchor[(task.vertex_id, task.index)]

    def _edge(self, tail: str, head: str, kind: ChannelKind, count: int, bundled: bool, text: str) -> None:
        attributes = []
        label = counted(count, f"{kind.value.lower()} channel")
        if count > 1:
            attributes.append(f"label={quote(label)}")
        if kind is ChannelKind.REMOTE:
            attributes.append("style=dashed, penwidth=1.8")
        if bundled:
            for end, node in (("ltail", tail), ("lhead", head)):
                if not node.startswith("more"):
                    taskmanager = next(tm for tm, first in self.first_node.items() if first == node)
                    attributes.append(f"{end}={taskmanager_key(taskmanager)}")
        listed = f" [{', '.join(attributes)}]" if attributes else ""
        self.writer.line(f"{tail} -> {head}{listed};")
        self.writer.title(f"{tail}->{head}", text)


# -- The physical graph as it ran on Spark -------------------------------------------------

#: Past this many tasks, the Spark drawing is one node per job vertex in each process.
SPARK_TASKS_ABOVE = 48
# Channels from few records (grey-blue) to the most (dark blue), by share of the busiest.
_RECORD_COLOURS = ("#9ca3af", "#93c5fd", "#60a5fa", "#2563eb", "#1e3a8a")


def record_colour(records: int | None, most: int) -> str:
    """The colour of a channel that carried ``records`` when the busiest carried ``most``."""
    if not records or most <= 0:
        return _RECORD_COLOURS[0]
    return _RECORD_COLOURS[1 + min(3, int(4 * records / (most + 1)))]


def spark_placement_to_dot(placement: SparkPlacement, *, tasks_above: int = SPARK_TASKS_ABOVE) -> DotGraph:
    """The physical graph as it ran on Spark: executors as boxes of the Python worker processes
    that ran its subtasks, each subtask's Spark stage, task and attempt, and its channels,
    solid within a process, dashed between processes (bold between executors), coloured and
    labelled by the records they carried. Past ``tasks_above`` tasks, each process shows one
    node per job vertex (its subtasks counted) and channels between the same nodes are merged.
    """
    graph = placement.graph
    writer = _Writer('"Physical on Spark"', "compound=true;\n")
    positions = {vertex_id: position for position, vertex_id in enumerate(graph.vertex_names)}
    fills = _group_fills(group.name for group in graph.groups)
    group_of = {key: graph.slots[task.slot].group for key, task in graph.tasks.items()}
    detailed = len(graph.tasks) <= tasks_above
    legend = "solid: same process, dashed: another process, bold: another executor; colour: records"
    writer.line(f"label={quote(f'{graph.job_name} on Spark · {legend}')}; labelloc=t;")
    where: dict[str | None, dict[str | None, list[tuple[str, int]]]] = {}
    for task_id in graph.tasks:
        ran = placement.subtasks.get(task_id)
        executor, process = (ran.executor, ran.process) if ran is not None else (None, None)
        where.setdefault(executor, {}).setdefault(process, []).append(task_id)
    anchor: dict[tuple[str, int], str] = {}
    for e, (executor, processes) in enumerate(sorted(where.items(), key=lambda item: (item[0] is None, item[0] or ""))):
        if executor is not None:
            label = f"executor {executor}"
        else:
            label = "not placed yet" if list(processes) == [None] else "executor not known yet"
        key = f"cluster_e{e}"
        writer.line(f"subgraph {key} {{")
        workers = "1 process" if len(processes) == 1 else f"{len(processes)} processes"
        writer.line(f"label={quote(f'{label} · {workers}')}; {_CLUSTER_STYLE};")
        writer.title(key, f"Spark {label}: {counted(sum(map(len, processes.values())), 'subtask')}")
        for p, (process, keys) in enumerate(sorted(processes.items(), key=lambda item: item[0] or "")):
            process_key = f"cluster_e{e}p{p}"
            shown = f"Python worker {process}" if process is not None else "not started"
            writer.line(f"subgraph {process_key} {{")
            writer.line(
                f'label={quote(shown)}; style="rounded,filled"; fillcolor="#ffffff"; color="#9ca3af"; fontsize=9;'
            )
            writer.title(process_key, shown)
            if detailed:
                for vertex_id, index in keys:
                    node = f"s{positions[vertex_id]}_{index}"
                    task = graph.task(vertex_id, index)
                    subtask = placement.subtasks.get((vertex_id, index))
                    spark_task = (
                        f"stage {subtask.stage} · task {subtask.task} · attempt {subtask.attempt}"
                        if subtask is not None and subtask.task is not None
                        else "not run yet"
                    )
                    fill = fills[group_of[(vertex_id, index)]]
                    writer.line(f'{node} [label={quote(task.name + chr(10) + spark_task)}, fillcolor="{fill}"];')
                    writer.title(
                        node,
                        f"{task.name}\nSpark executor: {executor or '-'}\nProcess: {process or '-'}\n{spark_task}",
                    )
                    anchor[(vertex_id, index)] = node
            else:
                by_vertex: dict[str, list[int]] = {}
                for vertex_id, index in keys:
                    by_vertex.setdefault(vertex_id, []).append(index)
                for vertex_id, indices in by_vertex.items():
                    node = f"v{positions[vertex_id]}_e{e}p{p}"
                    text = f"{graph.vertex_names[vertex_id]}\n{counted(len(indices), 'subtask')}"
                    group = group_of[(vertex_id, indices[0])]
                    writer.line(f'{node} [label={quote(text)}, fillcolor="{fills[group]}"];')
                    writer.title(
                        node, f"{graph.vertex_names[vertex_id]}: subtasks {format_indices([i + 1 for i in indices])}"
                    )
                    anchor.update(((vertex_id, index), node) for index in indices)
            writer.line("}")
        writer.line("}")
    edges: dict[tuple[str, str, ChannelKind, bool], list[SparkChannel]] = {}
    for channel in placement.channels:
        tail, head = anchor[channel.producer], anchor[channel.consumer]
        edges.setdefault((tail, head, channel.spark, bool(channel.crosses_executor)), []).append(channel)
    carried = {
        edge: None if all(c.records is None for c in channels) else sum(c.records or 0 for c in channels)
        for edge, channels in edges.items()
    }
    most = max((records or 0 for records in carried.values()), default=0)
    for (tail, head, kind, crosses), channels in edges.items():
        records = carried[(tail, head, kind, crosses)]
        attributes = [f'color="{record_colour(records, most)}"']
        if records:
            attributes.append(f"label={quote(f'{records:,}')}")
        if kind is ChannelKind.REMOTE:
            attributes.append("style=dashed")
        if crosses:
            attributes.append("penwidth=2.2")
        writer.line(f"{tail} -> {head} [{', '.join(attributes)}];")
        for channel in channels:
            writer.title(f"{tail}->{head}", _spark_channel_text(graph, channel))
    return writer.done()


def _spark_channel_text(graph: PhysicalGraph, channel: SparkChannel) -> str:
    producer, consumer = (graph.task(*end).name for end in (channel.producer, channel.consumer))
    where = {
        ChannelKind.LOCAL: "same process",
        ChannelKind.REMOTE: "another executor" if channel.crosses_executor else "another process",
        ChannelKind.UNKNOWN: "not known yet",
    }[channel.spark]
    records = "-" if channel.records is None else f"{channel.records:,}"
    return (
        f"{producer} -> {consumer}: {channel.ship_strategy}, {records} records\n"
        f"Spark: a shuffle, {where}; Flink: {channel.flink.value.lower()} channel"
    )


def to_dot(graph: StreamGraph | JobGraph | ExecutionGraph | PhysicalGraph, *, all_subtasks: bool = False) -> DotGraph:
    """The DOT of any of the four graphs; ``all_subtasks`` draws every subtask of an
    ExecutionGraph, wide vertices included (they are collapsed otherwise), and every slot of
    a physical graph."""
    if isinstance(graph, StreamGraph):
        return stream_graph_to_dot(graph)
    if isinstance(graph, JobGraph):
        return job_graph_to_dot(graph)
    if isinstance(graph, ExecutionGraph):
        return execution_graph_to_dot(graph, collapse_above=None if all_subtasks else COLLAPSE_ABOVE)
    if isinstance(graph, PhysicalGraph):
        return physical_graph_to_dot(graph, all_slots=all_subtasks)
    raise TypeError(f"Expected a StreamGraph, JobGraph, ExecutionGraph or PhysicalGraph, got {type(graph).__name__}.")
