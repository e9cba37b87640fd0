"""The ExecutionGraph: every JobVertex expanded into its parallel subtasks.

Plain data built by the compile pass ``execution_graph_builder``. Each subtask lists,
per input, which producer subtasks' partitions it reads, and which subpartition of each.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from flowmagic.graph.job_graph import JobEdge, JobGraph, JobVertex

__all__ = [
    "ExecutionEdge",
    "ExecutionGraph",
    "ExecutionJobVertex",
    "ExecutionState",
    "ExecutionVertex",
    "IntermediateResult",
]


class ExecutionState(enum.StrEnum):
    """Flink's ``ExecutionState``: the life of one subtask attempt, as the web UI shows it."""

    CREATED = "CREATED"
    SCHEDULED = "SCHEDULED"
    DEPLOYING = "DEPLOYING"
    INITIALIZING = "INITIALIZING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    CANCELING = "CANCELING"
    CANCELED = "CANCELED"
    FAILED = "FAILED"

    @property
    def is_terminal(self) -> bool:
        """Whether an attempt in this state has ended (Flink's ``isTerminal()``)."""
        return self in (ExecutionState.FINISHED, ExecutionState.CANCELED, ExecutionState.FAILED)

    def __str__(self) -> str:
        return self.value


@dataclass(eq=False, slots=True)
class IntermediateResult:
    """The runtime view of an IntermediateDataSet: one partition per producer subtask."""

    id: str
    producer: str
    result_partition_type: str
    partitions: list[str]


@dataclass(eq=False, slots=True)
class ExecutionEdge:
    """What one consumer subtask reads over one JobEdge.

    ``partitions`` are the producer subtask indices it reads; ``subpartitions`` the
    (first, last) subpartition index range it reads within each of those partitions.
    """

    source_vertex: str
    distribution_pattern: str
    ship_strategy: str
    result_id: str
    partitions: list[int]
    subpartitions: tuple[int, int]
    job_edge: JobEdge = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source_vertex": self.source_vertex,
            "distribution_pattern": self.distribution_pattern,
            "ship_strategy": self.ship_strategy,
            "result": self.result_id,
            "partitions": list(self.partitions),
            "subpartitions": list(self.subpartitions),
        }


@dataclass(eq=False, slots=True)
class ExecutionVertex:
    """One parallel subtask, named ``"Name (i/p)"`` with a 1-based ``i``."""

    vertex_id: str
    index: int
    name: str
    inputs: list[ExecutionEdge] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "inputs": [edge.to_dict() for edge in self.inputs]}


@dataclass(eq=False, slots=True)
class ExecutionJobVertex:
    """All subtasks of one JobVertex, with the resolved parallelism and max parallelism."""

    id: str
    name: str
    parallelism: int
    max_parallelism: int
    job_vertex: JobVertex = field(repr=False)
    subtasks: list[ExecutionVertex] = field(default_factory=list, repr=False)
    produced_results: list[IntermediateResult] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "parallelism": self.parallelism,
            "max_parallelism": self.max_parallelism,
            "produced_results": [
                {
                    "id": result.id,
                    "result_partition_type": result.result_partition_type,
                    "partitions": result.partitions,
                }
                for result in self.produced_results
            ],
            "subtasks": [subtask.to_dict() for subtask in self.subtasks],
        }


@dataclass(eq=False)
class ExecutionGraph:
    """The ExecutionGraph; ``vertices`` are in Flink's attach (topological) order."""

    job_name: str
    job_type: str
    #: The JobGraph this ExecutionGraph expands.
    job_graph: JobGraph = field(repr=False)
    vertices: dict[str, ExecutionJobVertex] = field(default_factory=dict)

    def vertex(self, vertex_id: str) -> ExecutionJobVertex:
        return self.vertices[vertex_id]

    @property
    def num_subtasks(self) -> int:
        return sum(vertex.parallelism for vertex in self.vertices.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_name": self.job_name,
            "job_type": self.job_type,
            "vertices": [vertex.to_dict() for vertex in self.vertices.values()],
        }

    def __repr__(self) -> str:
        return f"ExecutionGraph({self.job_name!r}, {len(self.vertices)} vertices, {self.num_subtasks} subtasks)"
