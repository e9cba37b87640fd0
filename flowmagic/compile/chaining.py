"""Operator chaining: Flink's ``isChainable`` as an AND of named checks.

Used by the hasher (a node's hash counts its chainable out-edges) and by the JobGraph
generator (which fuses chainable edges into one task).
"""

from __future__ import annotations

from flowmagic.graph.operators import ChainingStrategy
from flowmagic.graph.stream_graph import StreamEdge, StreamGraph, StreamNode

__all__ = ["is_chainable", "is_chainable_input"]

_BATCH_EXCHANGE = "BATCH"


def is_chainable(edge: StreamEdge, graph: StreamGraph) -> bool:
    """Whether ``edge`` is fused into its producer's task (``StreamingJobGraphGenerator.isChainable``)."""
    return len(graph.node(edge.target_id).in_edges) == 1 and is_chainable_input(edge, graph)


def is_chainable_input(edge: StreamEdge, graph: StreamGraph) -> bool:
    """All conditions besides the consumer having a single input."""
    upstream = graph.node(edge.source_id)
    downstream = graph.node(edge.target_id)
    return (
        graph.chaining_enabled
        and _same_slot_sharing_group(upstream, downstream)
        and _operators_chainable(upstream, downstream)
        and _partitioner_and_exchange_chainable(edge)
        and not _shares_input_type_with_another_edge(edge, downstream)
    )


def _same_slot_sharing_group(upstream: StreamNode, downstream: StreamNode) -> bool:
    return upstream.slot_sharing_group == downstream.slot_sharing_group


def _operators_chainable(upstream: StreamNode, downstream: StreamNode) -> bool:
    if upstream.chaining_strategy is ChainingStrategy.NEVER:
        return False
    strategy = downstream.chaining_strategy
    if strategy in (ChainingStrategy.NEVER, ChainingStrategy.HEAD):
        return False
    if strategy is ChainingStrategy.HEAD_WITH_SOURCES and upstream.source_kind != "new":
        return False
    # Different max parallelism chains: pipeline.operator-chaining.chain-operators-with-
    # different-max-parallelism defaults to true.
    return upstream.parallelism == downstream.parallelism


def _partitioner_and_exchange_chainable(edge: StreamEdge) -> bool:
    if edge.partitioner.consecutive_hash is not None:
        # The batch exchange only matters where the edge is not chained (then it hashes).
        return True
    return edge.partitioner.is_forward and edge.exchange_mode != _BATCH_EXCHANGE


def _shares_input_type_with_another_edge(edge: StreamEdge, downstream: StreamNode) -> bool:
    # A union into one input goes through the network stack, never through a chain.
    return any(other is not edge and other.type_number == edge.type_number for other in downstream.in_edges)
