"""Checks a program must pass before it can run, beyond what Flink checks while translating.

Flink only finds these at run time, in the middle of a job; flowmagic finds them when it
builds the ExecutionGraph, and names the operator at fault.
"""

from __future__ import annotations

from flowmagic.errors import MissingTimestampsError
from flowmagic.graph.operator_params import SourceParams, WindowParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.stream_graph import StreamGraph, StreamNode

__all__ = ["check_event_time_inputs"]

_FLINK_NO_TIMESTAMP = (
    "Record has Long.MIN_VALUE timestamp (= no timestamp marker). Is the time characteristic set to "
    "'ProcessingTime', or did you forget to call 'DataStream.assignTimestampsAndWatermarks(...)'?"
)


def _uses_event_time(node: StreamNode) -> bool:
    params = node.operator.params if node.operator is not None else None
    return isinstance(params, WindowParams) and params.assigner.is_event_time


def _assigns_timestamps(node: StreamNode) -> bool:
    operator = node.operator
    if operator is None:
        return False
    # A from_source() source assigns them itself when its watermark strategy has an assigner.
    params = operator.params
    strategy = params.watermark_strategy if isinstance(params, SourceParams) else None
    return operator.kind is OperatorKind.TIMESTAMPS_WATERMARKS or (
        strategy is not None and strategy.timestamp_assigner is not None
    )


def check_event_time_inputs(graph: StreamGraph) -> None:
    """Every event-time window must be fed only through a timestamp assigner."""
    for node in graph.nodes.values():
        if not _uses_event_time(node):
            continue
        stack = [edge.source_id for edge in node.in_edges]
        seen: set[int] = set()
        while stack:
            upstream = graph.node(stack.pop())
            if upstream.id in seen or _assigns_timestamps(upstream):
                continue
            seen.add(upstream.id)
            if upstream.source_kind is not None:
                where = f" (created at {node.call_site})" if node.call_site else ""
                raise MissingTimestampsError(
                    f"Window operator {node.name!r} (node {node.id}){where} uses event time, but records from "
                    f"{upstream.name!r} reach it without timestamps: call assign_timestamps_and_watermarks() "
                    f"before the window. Flink fails the job with: {_FLINK_NO_TIMESTAMP}"
                )
            stack.extend(edge.source_id for edge in upstream.in_edges)
