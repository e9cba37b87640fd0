"""The JobGraph: chains of StreamNodes fused into JobVertices, joined by JobEdges.

Plain data built by the compile pass ``job_graph_generator``.
"""

from __future__ import annotations

import html.entities
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flowmagic.errors import GraphError
from flowmagic.graph.jackson import pretty_json
from flowmagic.graph.partitioners import Partitioner
from flowmagic.graph.stream_graph import StreamEdge, StreamGraph

if TYPE_CHECKING:
    from flowmagic.graph.execution_graph import ExecutionGraph

__all__ = ["IntermediateDataSet", "JobEdge", "JobGraph", "JobVertex", "OperatorIDPair"]

POINTWISE = "POINTWISE"
ALL_TO_ALL = "ALL_TO_ALL"


@dataclass(frozen=True, slots=True)
class OperatorIDPair:
    """An operator's generated id (its hash) and the user-defined one from ``set_uid_hash``."""

    generated: str
    user_defined: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"generated": self.generated, "user_defined": self.user_defined}


@dataclass(eq=False, slots=True)
class IntermediateDataSet:
    """The result a producer vertex writes for one non-chained output edge."""

    id: str
    producer: str
    result_partition_type: str
    consumers: list[JobEdge] = field(default_factory=list, repr=False)


@dataclass(eq=False, slots=True)
class JobEdge:
    """A network exchange from an IntermediateDataSet into a consumer vertex."""

    source_vertex: str
    target_vertex: str
    dataset: IntermediateDataSet = field(repr=False)
    partitioner: Partitioner
    distribution_pattern: str
    #: The StreamEdge this JobEdge carries (producer operator, consumer operator, tag).
    stream_edge: StreamEdge = field(repr=False)

    @property
    def ship_strategy(self) -> str:
        return str(self.partitioner)

    @property
    def result_partition_type(self) -> str:
        return self.dataset.result_partition_type

    def to_dict(self) -> dict[str, Any]:
        return {
            "source_vertex": self.source_vertex,
            "ship_strategy": self.ship_strategy,
            "distribution_pattern": self.distribution_pattern,
            "result_partition_type": self.result_partition_type,
        }


@dataclass(eq=False, slots=True)
class JobVertex:
    """A chain of operators that runs as one task.

    ``chain`` lists the stream node ids of the chain, head first, in the order the chain is
    walked (depth first along chained edges); ``operator_ids`` is in Flink's order (post
    order, chain head last).
    """

    id: str
    name: str
    head_node: int
    chain: list[int]
    parallelism: int
    max_parallelism: int
    parallelism_configured: bool
    slot_sharing_group: str
    invokable: str
    operator_ids: list[OperatorIDPair]
    description: str
    #: Chained (in-task) edges between the operators of ``chain``.
    chained_edges: list[StreamEdge] = field(default_factory=list, repr=False)
    inputs: list[JobEdge] = field(default_factory=list, repr=False)
    produced_datasets: list[IntermediateDataSet] = field(default_factory=list, repr=False)
    slot_sharing_group_index: int = 0

    @property
    def is_source(self) -> bool:
        return not self.inputs

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "parallelism": self.parallelism,
            "max_parallelism": self.max_parallelism,
            "slot_sharing_group": self.slot_sharing_group,
            "slot_sharing_group_index": self.slot_sharing_group_index,
            "invokable": self.invokable,
            "operator_ids": [pair.to_dict() for pair in self.operator_ids],
            "inputs": [edge.to_dict() for edge in self.inputs],
        }


def _escape_html4(text: str) -> str:
    # commons-text escapeHtml4: the HTML 4.01 named entities (no &apos;), then Flink's own
    # replacements for newlines and backslashes.
    names = html.entities.codepoint2name
    escaped = "".join(f"&{names[ord(ch)]};" if ord(ch) in names else ch for ch in text)
    return escaped.replace("\n", "<br/>").replace("\\", "&#92;")


@dataclass(eq=False)
class JobGraph:
    """The JobGraph of a program; ``vertices`` keeps Flink's creation order."""

    name: str
    job_type: str
    dynamic: bool
    #: The StreamGraph this JobGraph was built from.
    stream_graph: StreamGraph = field(repr=False)
    vertices: dict[str, JobVertex] = field(default_factory=dict)

    def vertex(self, vertex_id: str) -> JobVertex:
        return self.vertices[vertex_id]

    @property
    def edges(self) -> list[JobEdge]:
        return [edge for vertex in self.vertices.values() for edge in vertex.inputs]

    def sorted_vertices(self) -> list[JobVertex]:
        """``getVerticesSortedTopologicallyFromSources``: sources in creation order, then
        each consumer as soon as all of its producers are placed (depth first)."""
        remaining = dict.fromkeys(self.vertices)
        ordered: list[JobVertex] = []
        for vertex_id, vertex in self.vertices.items():
            if not vertex.inputs:
                ordered.append(vertex)
                del remaining[vertex_id]
        position = 0
        while remaining:
            if position >= len(ordered):
                raise GraphError("The job graph is cyclic.")
            self._place_consumers(ordered[position], ordered, remaining)
            position += 1
        return ordered

    def _place_consumers(self, start: JobVertex, ordered: list[JobVertex], remaining: dict[str, None]) -> None:
        stack = [iter([edge for dataset in start.produced_datasets for edge in dataset.consumers])]
        while stack:
            edge = next(stack[-1], None)
            if edge is None:
                stack.pop()
                continue
            target = self.vertices[edge.target_vertex]
            if target.id not in remaining:
                continue
            if any(other is not edge and other.source_vertex in remaining for other in target.inputs):
                continue
            ordered.append(target)
            del remaining[target.id]
            stack.append(iter([e for dataset in target.produced_datasets for e in dataset.consumers]))

    def get_execution_graph(self) -> ExecutionGraph:
        """Expand into the ExecutionGraph (subtasks, partitions, wiring), with the passes that
        built this JobGraph's StreamGraph."""
        if self.stream_graph.passes is None:
            raise GraphError("this JobGraph was not built by the compile passes; build it with compile.build()")
        return self.stream_graph.passes.execution_graph(self)

    def to_dict(self) -> dict[str, Any]:
        """Export in the conformance schema: vertices in topological order."""
        return {"vertices": [vertex.to_dict() for vertex in self.sorted_vertices()]}

    def to_plan(self) -> dict[str, Any]:
        """Flink's web-UI job plan (``JsonPlanGenerator``), without the random ``jid``."""
        nodes = []
        for vertex in self.vertices.values():
            node: dict[str, Any] = {
                "id": vertex.id,
                "operator": "",
                "parallelism": vertex.parallelism,
                "operator_strategy": "",
                "description": _escape_html4(vertex.description),
                "optimizer_properties": {},
            }
            if vertex.inputs:
                node["inputs"] = [
                    {
                        "id": edge.source_vertex,
                        "num": num,
                        "exchange": edge.result_partition_type.lower(),
                        "ship_strategy": edge.ship_strategy,
                    }
                    for num, edge in enumerate(vertex.inputs)
                ]
            nodes.append(node)
        return {"name": self.name, "type": self.job_type, "nodes": nodes}

    def to_json_plan(self) -> str:
        return pretty_json(self.to_plan())

    def __repr__(self) -> str:
        return f"JobGraph({self.name!r}, {self.job_type}, {len(self.vertices)} vertices)"
