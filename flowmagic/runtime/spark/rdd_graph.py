"""The ExecutionGraph as RDDs: one per vertex, joined by shuffles, ending in the results."""

from __future__ import annotations

from typing import Any

from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.runtime.metrics import MetricsServer
from flowmagic.runtime.plan import VertexPlan, channel_orders
from flowmagic.runtime.spark.shuffle import Frames, SlotFilter, exchange, lines_as_items
from flowmagic.runtime.spark.subtask import SubtaskFunction
from flowmagic.runtime.wire import RESULT_SLOT

__all__ = ["build_rdds"]


def build_rdds(graph: ExecutionGraph, plans: dict[str, VertexPlan], sc: Any, server: MetricsServer | None) -> Any:
    """The RDD whose ``collect()`` runs the job and returns the sinks' ``(key, payload)``."""
    from pyspark import StorageLevel

    orders = channel_orders(graph, plans)
    inputs: dict[str, list[Any]] = {vertex_id: [] for vertex_id in graph.vertices}
    terminal = []
    for vertex in graph.vertices.values():
        plan = plans[vertex.id]
        parallelism = vertex.parallelism
        if plan.remote_text_path is not None:
            # Hadoop's reader (hdfs://, s3a://, ...) runs in the JVM; its partitions become
            # the split readers' input, one per subtask.
            lines = sc.textFile(plan.remote_text_path, parallelism).coalesce(parallelism)
            shuffled = lines.mapPartitions(lines_as_items)
        elif plan.inputs:
            shuffled = exchange(sc, inputs[vertex.id], parallelism)
        else:
            shuffled = sc.parallelize(range(parallelism), parallelism)
        address, secret = (server.address, server.secret) if server is not None else (None, "")
        output = shuffled.mapPartitionsWithIndex(SubtaskFunction(plan, address, secret))
        output.setName(vertex.name)
        results = plan.has_results or not plan.out_edges
        if len(plan.out_edges) + results > 1:
            output = output.persist(StorageLevel.MEMORY_AND_DISK)
        for edge in plan.out_edges:
            consumer = edge.consumer
            if plans[consumer].remote_text_path is not None:
                # The monitor lists nothing for a remote path; it still runs, as a terminal.
                terminal.append(output.mapPartitions(SlotFilter(RESULT_SLOT)))
                continue
            only = len(plan.out_edges) == 1 and not results
            inputs[consumer].append(output.mapPartitions(Frames(None if only else edge.slot, orders[consumer])))
        if results:
            terminal.append(output.mapPartitions(SlotFilter(RESULT_SLOT)))
    return terminal[0] if len(terminal) == 1 else sc.union(terminal)
