"""Pass 2: StreamGraph -> JobGraph (Flink's ``StreamingJobGraphGenerator``).

Chains are built depth first from the sources in id order: each chainable edge extends the
current chain, each other edge ends it and starts a new chain at its target. A JobVertex is
created when the walk returns to its head, so vertices are created children first, which
is the order Flink's job plan lists them in. Then every non-chained edge becomes an
IntermediateDataSet plus a JobEdge, appended to its consumer's inputs in vertex order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowmagic.compile.chaining import is_chainable
from flowmagic.compile.hashing import check_unique_uids
from flowmagic.graph.job_graph import (
    ALL_TO_ALL,
    POINTWISE,
    IntermediateDataSet,
    JobEdge,
    JobGraph,
    JobVertex,
    OperatorIDPair,
)
from flowmagic.graph.partitioners import FORWARD, RESCALE, Partitioner
from flowmagic.graph.stream_graph import StreamEdge, StreamGraph, StreamNode

__all__ = ["create_job_graph", "result_partition_type"]

_DEFAULT_GROUP = "default"


def create_job_graph(graph: StreamGraph, job_name: str | None = None) -> JobGraph:
    """Chain the operators of ``graph`` into JobVertices and connect them."""
    return _JobGraphBuilder(graph, job_name).build()


def result_partition_type(exchange_mode: str, batch: bool) -> str:
    """The ResultPartitionType Flink derives from an edge's exchange mode."""
    if exchange_mode == "PIPELINED":
        return "PIPELINED_BOUNDED"
    if exchange_mode == "BATCH":
        return "BLOCKING"
    if exchange_mode in ("HYBRID_FULL", "HYBRID_SELECTIVE"):
        return exchange_mode
    return "BLOCKING" if batch else "PIPELINED_BOUNDED"


@dataclass(slots=True)
class _Chain:
    head: int
    nodes: list[int] = field(default_factory=list)
    operator_ids: list[OperatorIDPair] = field(default_factory=list)
    chained_edges: list[StreamEdge] = field(default_factory=list)
    transitive_out_edges: list[StreamEdge] = field(default_factory=list)


@dataclass(slots=True)
class _Frame:
    """A node being walked: its chainable and other out-edges, and how far it got."""

    node_id: int
    chain: _Chain
    chainable: list[StreamEdge]
    other: list[StreamEdge]
    next_chainable: int = 0
    next_other: int = 0
    transitive: list[StreamEdge] = field(default_factory=list)


class _JobGraphBuilder:
    def __init__(self, graph: StreamGraph, job_name: str | None):
        self.graph = graph
        self.batch = graph.job_type == "BATCH"
        check_unique_uids(graph)
        self.hashes = graph.operator_hashes
        self.job_graph = JobGraph(
            name=job_name or graph.job_name, job_type=graph.job_type, dynamic=graph.dynamic, stream_graph=graph
        )
        self.chains: dict[int, _Chain] = {}
        self.chained_names: dict[int, str] = {}
        self.chained_children: dict[int, list[int]] = {}
        self._vertices_by_head: dict[int, JobVertex] = {}

    def build(self) -> JobGraph:
        for source_id in sorted(self.graph.source_ids):
            self._create_chains(source_id)
        if self.job_graph.dynamic:
            self._set_dynamic_parallelism()
        self._connect()
        self._assign_slot_sharing_indices()
        return self.job_graph

    def _chain(self, head: int) -> _Chain:
        return self.chains.setdefault(head, _Chain(head))

    def _create_chains(self, start_id: int) -> None:
        # Flink's createChain recursion, unrolled onto an explicit stack so that long
        # pipelines cannot hit Python's recursion limit. Per node: extend the chain along
        # each chainable edge (depth first), then, per non-chainable edge, build the chain
        # starting at its target completely before the next edge; a chain's JobVertex is
        # created when the walk returns to its head, so consumers are created first.
        if start_id in self._vertices_by_head:
            return
        stack = [self._frame(start_id, self._chain(start_id))]
        while stack:
            frame = stack[-1]
            if frame.next_chainable < len(frame.chainable):
                edge = frame.chainable[frame.next_chainable]
                frame.next_chainable += 1
                frame.chain.chained_edges.append(edge)
                stack.append(self._frame(edge.target_id, frame.chain))
                continue
            if frame.next_other < len(frame.other):
                edge = frame.other[frame.next_other]
                frame.next_other += 1
                frame.transitive.append(edge)
                if edge.target_id not in self._vertices_by_head:
                    stack.append(self._frame(edge.target_id, self._chain(edge.target_id)))
                continue
            stack.pop()
            self._finish_node(frame.node_id, frame.chainable, frame.chain)
            if frame.node_id == frame.chain.head:
                frame.chain.transitive_out_edges = frame.transitive
                self._create_vertex(frame.chain)
            else:
                stack[-1].transitive.extend(frame.transitive)

    def _frame(self, node_id: int, chain: _Chain) -> _Frame:
        chain.nodes.append(node_id)
        chainable, other = self._split_outputs(self.graph.node(node_id))
        return _Frame(node_id, chain, chainable, other)

    def _split_outputs(self, node: StreamNode) -> tuple[list[StreamEdge], list[StreamEdge]]:
        chainable: list[StreamEdge] = []
        other: list[StreamEdge] = []
        for edge in node.out_edges:
            (chainable if is_chainable(edge, self.graph) else other).append(edge)
        return chainable, other

    def _finish_node(self, node_id: int, chainable: list[StreamEdge], chain: _Chain) -> None:
        node = self.graph.node(node_id)
        children = [edge.target_id for edge in chainable]
        self.chained_children[node_id] = children
        if len(children) > 1:
            self.chained_names[node_id] = f"{node.name} -> ({', '.join(self.chained_names[c] for c in children)})"
        elif children:
            self.chained_names[node_id] = f"{node.name} -> {self.chained_names[children[0]]}"
        else:
            self.chained_names[node_id] = node.name
        chain.operator_ids.append(OperatorIDPair(self.hashes[node_id].hex(), node.uid_hash))

    def _create_vertex(self, chain: _Chain) -> None:
        head = self.graph.node(chain.head)
        nodes = [self.graph.node(n) for n in chain.nodes]
        if head.source_kind == "new":
            invokable = "SourceOperatorStreamTask"
        elif head.source_kind == "legacy":
            invokable = "SourceStreamTask"
        elif head.multiple_inputs:
            invokable = "MultipleInputStreamTask"
        else:
            input_types = {edge.type_number for edge in head.in_edges}
            invokable = {1: "OneInputStreamTask", 2: "TwoInputStreamTask"}.get(
                len(input_types), "MultipleInputStreamTask"
            )
        vertex = JobVertex(
            id=self.hashes[chain.head].hex(),
            name=self.chained_names[chain.head],
            head_node=chain.head,
            chain=list(chain.nodes),
            parallelism=head.parallelism if head.parallelism > 0 else -1,
            max_parallelism=head.max_parallelism,
            parallelism_configured=any(node.parallelism_configured for node in nodes),
            slot_sharing_group=head.slot_sharing_group or _DEFAULT_GROUP,
            invokable=invokable,
            operator_ids=list(chain.operator_ids),
            description=self._tree_description(chain.head),
            chained_edges=list(chain.chained_edges),
        )
        self._vertices_by_head[chain.head] = vertex
        self.job_graph.vertices[vertex.id] = vertex

    def _tree_description(self, head: int) -> str:
        lines: list[str] = []
        stack = [(head, "", "")]
        while stack:
            node_id, first, rest = stack.pop()
            lines.append(first + self.graph.node(node_id).operator_description + "\n")
            children = self.chained_children[node_id]
            for index in reversed(range(len(children))):
                last = index == len(children) - 1
                stack.append((children[index], rest + ("+- " if last else ":- "), rest + ("   " if last else ":  ")))
        return "".join(lines)

    def _set_dynamic_parallelism(self) -> None:
        # Adaptive batch scheduling decides the parallelism of vertices nobody configured.
        for vertex in self.job_graph.vertices.values():
            if not vertex.parallelism_configured:
                vertex.parallelism = -1
        for group in self._forward_groups():
            decided = [v.parallelism for v in group if v.parallelism > 0]
            max_set = [v.max_parallelism for v in group if v.max_parallelism > 0]
            for vertex in group:
                if decided:
                    vertex.parallelism = decided[0]
                if max_set:
                    vertex.max_parallelism = min(max_set)

    def _forward_groups(self) -> list[list[JobVertex]]:
        by_head = self._vertices_by_head
        groups = _UnionFind(by_head)
        for head, _vertex in by_head.items():
            for edge in self.chains[head].transitive_out_edges:
                if self._job_edge_partitioner(edge).kind == FORWARD:
                    groups.union(head, edge.target_id)
        return [[by_head[h] for h in members] for members in groups.groups() if len(members) > 1]

    def _job_edge_partitioner(self, edge: StreamEdge) -> Partitioner:
        # A FORWARD Flink picked itself in a dynamic graph may become RESCALE once the
        # scheduler is free to choose different parallelisms for the two vertices.
        if edge.partitioner.unspecified:
            return Partitioner(RESCALE)
        # Flink replaces a ForwardForConsecutiveHashPartitioner that is not chained by its hash.
        return edge.partitioner.consecutive_hash or edge.partitioner

    def _connect(self) -> None:
        by_head = self._vertices_by_head
        for head, producer in by_head.items():
            for index, edge in enumerate(self.chains[head].transitive_out_edges):
                consumer = by_head[edge.target_id]
                partitioner = self._job_edge_partitioner(edge)
                dataset = IntermediateDataSet(
                    id=f"{producer.id[:24]}{index:08x}",
                    producer=producer.id,
                    result_partition_type=(
                        "BLOCKING_PERSISTENT"
                        if edge.persistent
                        else result_partition_type(edge.exchange_mode, self.batch)
                    ),
                )
                job_edge = JobEdge(
                    source_vertex=producer.id,
                    target_vertex=consumer.id,
                    dataset=dataset,
                    partitioner=partitioner,
                    distribution_pattern=POINTWISE if partitioner.is_pointwise else ALL_TO_ALL,
                    stream_edge=edge,
                )
                dataset.consumers.append(job_edge)
                producer.produced_datasets.append(dataset)
                consumer.inputs.append(job_edge)

    def _assign_slot_sharing_indices(self) -> None:
        regions = _UnionFind(self.job_graph.vertices)
        if self.batch:
            for edge in self.job_graph.edges:
                if edge.result_partition_type not in ("BLOCKING", "BLOCKING_PERSISTENT"):
                    regions.union(edge.source_vertex, edge.target_vertex)
        indices: dict[object, int] = {}
        for vertex in self.job_graph.sorted_vertices():
            if vertex.slot_sharing_group != _DEFAULT_GROUP:
                key: object = ("named", vertex.slot_sharing_group)
            else:
                key = ("region", regions.find(vertex.id)) if self.batch else ("default",)
            vertex.slot_sharing_group_index = indices.setdefault(key, len(indices))


class _UnionFind:
    def __init__(self, items):
        self.parent = {item: item for item in items}

    def find(self, item):
        root = item
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[item] != root:
            self.parent[item], item = root, self.parent[item]
        return root

    def union(self, a, b) -> None:
        self.parent[self.find(a)] = self.find(b)

    def groups(self) -> list[list]:
        members: dict = {}
        for item in self.parent:
            members.setdefault(self.find(item), []).append(item)
        return list(members.values())
