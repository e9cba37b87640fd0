"""The StreamGraph: one StreamNode per physical transformation, StreamEdges between them.

Plain data built by the compile pass ``stream_graph_generator``. Virtual nodes
(partitions, side outputs) are already resolved into edge properties here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from flowmagic.errors import GraphError
from flowmagic.graph.jackson import pretty_json
from flowmagic.graph.operators import ChainingStrategy, OperatorSpec
from flowmagic.graph.partitioners import Partitioner

if TYPE_CHECKING:
    from flowmagic.graph.execution_graph import ExecutionGraph
    from flowmagic.graph.job_graph import JobGraph

__all__ = ["Passes", "StreamEdge", "StreamGraph", "StreamNode"]

UNDEFINED = "UNDEFINED"


@dataclass(eq=False, slots=True)
class StreamEdge:
    """A physical edge between two StreamNodes.

    ``type_number`` is 0 for one-input consumers and 1/2 for the sides of a two-input one;
    ``unique_id`` counts the edges already joining the same pair of nodes (a self-union has
    edges 0 and 1).
    """

    source_id: int
    target_id: int
    type_number: int
    partitioner: Partitioner
    output_tag: str | None = None
    exchange_mode: str = UNDEFINED
    unique_id: int = 0
    #: The edge into a BATCH ``cache()``'s CacheWrite: its result is kept after the job
    #: (Flink's BLOCKING_PERSISTENT partition).
    persistent: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target_id,
            "partitioner": str(self.partitioner),
            "type_number": self.type_number,
            "output_tag": self.output_tag,
            "exchange_mode": self.exchange_mode,
        }

    def __repr__(self) -> str:
        tag = f" [{self.output_tag}]" if self.output_tag else ""
        return f"StreamEdge({self.source_id} -{self.partitioner}{tag}-> {self.target_id})"


@dataclass(eq=False, slots=True)
class StreamNode:
    """One operator of the StreamGraph."""

    id: int
    name: str
    parallelism: int
    operator: OperatorSpec | None = field(default=None, repr=False)
    description: str | None = None
    max_parallelism: int = -1
    parallelism_configured: bool = False
    slot_sharing_group: str | None = "default"
    chaining_strategy: ChainingStrategy = ChainingStrategy.ALWAYS
    uid: str | None = None
    uid_hash: str | None = None
    #: "new" (FLIP-27 source), "legacy" (SourceFunction) or None for non-sources.
    source_kind: str | None = None
    bounded: bool = True
    #: Added as a multiple input operator (Flink's ``addMultipleInputOperator``), which runs in
    #: a MultipleInputStreamTask whatever its number of inputs.
    multiple_inputs: bool = False
    #: Key selectors of keyed inputs, one per input side (None when that side is not keyed).
    state_keys: tuple[Callable[[Any], Any] | None, ...] = field(default=(), repr=False)
    call_site: str | None = field(default=None, repr=False)
    in_edges: list[StreamEdge] = field(default_factory=list, repr=False)
    out_edges: list[StreamEdge] = field(default_factory=list, repr=False)

    @property
    def operator_description(self) -> str:
        """The description shown in plans; defaults to the name, as in Flink."""
        return self.description if self.description is not None else self.name

    @property
    def label(self) -> str:
        """``name-id``: how Flink names a node in its messages."""
        return f"{self.name}-{self.id}"


class Passes(Protocol):
    """The compile passes after the StreamGraph, as the generator hands them to its graph.

    They let ``StreamGraph.get_job_graph()`` and ``JobGraph.get_execution_graph()`` keep
    Flink's names while the graphs stay data that imports no pass.
    """

    def job_graph(self, graph: StreamGraph, job_name: str | None) -> JobGraph: ...

    def execution_graph(self, graph: JobGraph) -> ExecutionGraph: ...


@dataclass(eq=False)
class StreamGraph:
    """The StreamGraph of a program.

    ``nodes`` maps node ids to nodes in ascending id order. ``source_ids`` and ``sink_ids``
    are Flink's source and (legacy) sink sets. ``operator_hashes`` maps node ids to their
    16-byte StreamGraphHasherV2 hashes (the operator ids), computed by the generator.
    """

    job_name: str
    job_type: str = "STREAMING"
    dynamic: bool = False
    chaining_enabled: bool = True
    nodes: dict[int, StreamNode] = field(default_factory=dict)
    source_ids: list[int] = field(default_factory=list)
    sink_ids: list[int] = field(default_factory=list)
    #: The job-wide default parallelism the graph was generated with.
    default_parallelism: int = 1
    #: ``pipeline.auto-watermark-interval`` in ms (0: no periodic watermarks).
    auto_watermark_interval_ms: int = 200
    #: The name of the API dialect of its program (``java``, ``pyflink``: see
    #: ``flowmagic.vocabulary.dialect``), whose functions see what that API's see.
    dialect: str = "java"
    operator_hashes: dict[int, bytes] = field(default_factory=dict, repr=False)
    #: Flink's global job parameters (``runtime_context.get_job_parameter(key, default)``).
    job_parameters: dict[str, str] = field(default_factory=dict, repr=False)
    #: The passes that generated this graph and build the next ones (see :class:`Passes`).
    passes: Passes | None = field(default=None, repr=False)

    def node(self, node_id: int) -> StreamNode:
        return self.nodes[node_id]

    @property
    def edges(self) -> list[StreamEdge]:
        """All edges, grouped by source node in id order."""
        return [edge for node in self.nodes.values() for edge in node.out_edges]

    def get_job_graph(self, job_name: str | None = None) -> JobGraph:
        """Translate into the JobGraph (operator chaining, vertex ids): ``compile.build``'s
        first step, under Flink's name ``StreamGraph.getJobGraph()``."""
        if self.passes is None:
            raise GraphError("this StreamGraph was not generated by the compile passes; use compile.build()")
        return self.passes.job_graph(self, job_name)

    def to_dict(self) -> dict[str, Any]:
        """Export in the conformance schema (``stream_graph`` of the fixtures)."""
        hashes = self.operator_hashes
        return {
            "job_type": self.job_type,
            "dynamic": self.dynamic,
            "chaining_enabled": self.chaining_enabled,
            "nodes": [
                {
                    "id": node.id,
                    "name": node.name,
                    "parallelism": node.parallelism,
                    "max_parallelism": node.max_parallelism,
                    "slot_sharing_group": node.slot_sharing_group,
                    "chaining_strategy": str(node.chaining_strategy),
                    "uid": node.uid,
                    "operator_id": hashes[node.id].hex(),
                    "out_edges": [edge.to_dict() for edge in node.out_edges],
                }
                for node in self.nodes.values()
            ],
            # Flink keeps both in hash sets, which have no order of their own: ascending.
            "source_ids": sorted(self.source_ids),
            "sink_ids": sorted(self.sink_ids),
        }

    def to_plan(self) -> dict[str, Any]:
        """Flink's StreamGraph JSON (``JSONGenerator``) as a dict: non-sinks, then sinks."""
        sinks = set(self.sink_ids)
        sources = set(self.source_ids)
        ordered = sorted(self.nodes, key=lambda node_id: (node_id in sinks, node_id))
        plan = []
        for node_id in ordered:
            node = self.nodes[node_id]
            pact = "Data Source" if node_id in sources else "Data Sink" if node_id in sinks else "Operator"
            entry: dict[str, Any] = {
                "id": node_id,
                "type": node.name,
                "pact": pact,
                "contents": node.operator_description,
                "parallelism": node.parallelism,
            }
            if node_id not in sources:
                # Flink checks the array size after adding the element, so "side" is never "first".
                entry["predecessors"] = [
                    {"id": edge.source_id, "ship_strategy": str(edge.partitioner), "side": "second"}
                    for edge in node.in_edges
                ]
            plan.append(entry)
        return {"nodes": plan}

    def to_json_plan(self) -> str:
        """The text ``env.getExecutionPlan()`` returns, laid out as Flink lays it out."""
        return pretty_json(self.to_plan())

    def __repr__(self) -> str:
        return (
            f"StreamGraph({self.job_type}, {len(self.nodes)} nodes, sources={self.source_ids}, sinks={self.sink_ids})"
        )
