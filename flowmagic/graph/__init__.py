"""Plain-data graphs: transformations, StreamGraph, JobGraph, ExecutionGraph and the physical graph."""

from flowmagic.graph.execution_graph import (
    ExecutionGraph,
    ExecutionJobVertex,
    ExecutionVertex,
)
from flowmagic.graph.job_graph import JobEdge, JobGraph, JobVertex
from flowmagic.graph.operators import ChainingStrategy, OperatorSpec
from flowmagic.graph.partitioners import Partitioner
from flowmagic.graph.physical_graph import PhysicalGraph
from flowmagic.graph.stream_graph import StreamEdge, StreamGraph, StreamNode

__all__ = [
    "ChainingStrategy",
    "ExecutionGraph",
    "ExecutionJobVertex",
    "ExecutionVertex",
    "JobEdge",
    "JobGraph",
    "JobVertex",
    "OperatorSpec",
    "Partitioner",
    "PhysicalGraph",
    "StreamEdge",
    "StreamGraph",
    "StreamNode",
]
