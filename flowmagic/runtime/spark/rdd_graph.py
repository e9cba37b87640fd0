"""The ExecutionGraph as RDDs: one per vertex, joined by shuffles, ending in the results."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.runtime.metrics_channel import MetricsServer
from flowmagic.runtime.plan import VertexPlan, channel_orders
from flowmagic.runtime.spark.shuffle import Frames, exchange, lines_as_items, sink_results
from flowmagic.runtime.spark.subtask import SubtaskFunction
from flowmagic.runtime.wire import RESULT_SLOT

__all__ = ["build_rdds"]


def build_rdds(
    graph: ExecutionGraph,
    plans: dict[str, VertexPlan],
    sc: Any,
    server: MetricsServer | None,
    *,
    subtask_function: Callable[[VertexPlan], Callable[[int, Iterator[Any]], Iterator[Any]]] | None = None,
    source_input: Callable[[VertexPlan], Any] | None = None,
) -> Any:
    """The RDD whose ``collect()`` runs the job and returns the sinks' results, as
    ``(key, [payload, ...])`` (see :func:`~flowmagic.runtime.spark.shuffle.sink_results`).

    A continuous job's epoch gives its own ``subtask_function`` (what each task runs) and
    ``source_input`` (each source vertex's RDD of input, partition ``i`` for subtask ``i``).
    """
    from pyspark import StorageLevel

    address, secret = (server.address, server.secret) if server is not None else (None, "")
    if subtask_function is None:
        subtask_function = lambda plan: SubtaskFunction(plan, address, secret)  # noqa: E731

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
        elif source_input is not None:
            shuffled = source_input(plan)
        else:
            shuffled = sc.parallelize(range(parallelism), parallelism)
        output = shuffled.mapPartitionsWithIndex(subtask_function(plan))
        output.setName(vertex.name)
        results = plan.has_results or not plan.out_edges
        if len(plan.out_edges) + results > 1:
            output = output.persist(StorageLevel.MEMORY_AND_DISK)
        for edge in plan.out_edges:
            consumer = edge.consumer
            if plans[consumer].remote_text_path is not None:
                # The monitor lists nothing for a remote path; it still runs, as a terminal.
                terminal.append(sink_results(sc, output, RESULT_SLOT))
                continue
            only = len(plan.out_edges) == 1 and not results
            inputs[consumer].append(output.mapPartitions(Frames(plan, edge.slot, orders[consumer], every_item=only)))
        if results:
            terminal.append(sink_results(sc, output, RESULT_SLOT))
    return terminal[0] if len(terminal) == 1 else sc.union(terminal)
