"""Running a job: an ExecutionGraph on an executor, to results, printed output and final metrics."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from flowmagic.errors import JobError, ProgramError, UnsupportedSourceError
from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.runtime.registry import implementation
from flowmagic.runtime.result import JobResult

__all__ = ["EXECUTORS", "JobResult", "execute"]

#: The executors a job can run on: Spark (the default) and this Python process.
EXECUTORS = ("spark", "local")


def _check_bounded(graph: ExecutionGraph) -> None:
    for node in graph.job_graph.stream_graph.nodes.values():
        if node.source_kind is not None and not node.bounded:
            raise UnsupportedSourceError(
                f"{node.name!r} is unbounded: flowmagic runs bounded jobs on Spark for now, and a continuous "
                "mode (Spark Structured Streaming micro-batches) is planned. Use a bounded source "
                "(from_collection, from_sequence, read_text_file, from_datagen(count=...))."
            )


def execute(
    graph: ExecutionGraph,
    *,
    executor: str = "spark",
    spark: Any = None,
    on_progress: Callable[[JobMonitor], None] | None = None,
    cancel_event: threading.Event | None = None,
    monitor: JobMonitor | None = None,
    echo: bool = True,
    metrics: bool = True,
) -> JobResult:
    """Run the ExecutionGraph ``graph`` and wait for it.

    ``executor`` is ``"spark"`` (``spark``, else the active or an embedded session) or
    ``"local"`` (this process, see :mod:`flowmagic.runtime.local`). Print sinks' lines go to
    this process's stdout/stderr when ``echo`` is true, after the job succeeded, subtask by
    subtask. ``on_progress(monitor)`` is called about twice a second while the job runs.
    ``metrics=False`` turns Spark's live metrics channel off.
    """
    if executor not in EXECUTORS:
        raise ProgramError(f"Unknown executor {executor!r}: use one of {', '.join(EXECUTORS)}.")
    _check_bounded(graph)
    if monitor is None:
        monitor = JobMonitor(graph.job_name)
    for vertex in graph.vertices.values():
        if vertex.id not in monitor.vertices:
            monitor.add_vertex(vertex.id, vertex.name, vertex.parallelism)
    if executor == "local":
        from flowmagic.runtime.local import run_locally

        items = run_locally(graph, monitor, on_progress=on_progress, cancel_event=cancel_event)
    else:
        # Only a Spark run loads pyspark.
        from flowmagic.runtime.spark import run_on_spark

        items = run_on_spark(
            graph, monitor, spark=spark, on_progress=on_progress, cancel_event=cancel_event, metrics=metrics
        )
    result = JobResult(
        job_name=graph.job_name,
        job_type=graph.job_type,
        state=monitor.state,
        duration=(monitor.end_time or 0) - (monitor.start_time or 0),
    )
    _deliver(graph, items, result)
    result.metrics = monitor.snapshot()
    if echo:
        result.echo()
    return result


def _deliver(graph: ExecutionGraph, items: list[tuple[tuple[int, int], Any]], result: JobResult) -> None:
    """Hand each sink's payloads to its implementation's driver side, in subtask order."""
    nodes = graph.job_graph.stream_graph.nodes
    sinks: dict[int, Any] = {}
    for (node_id, _subtask), payload in items:
        operator = nodes[node_id].operator
        if operator is None:
            raise JobError(f"node {node_id} delivered results but runs no operator")
        sink = sinks.setdefault(node_id, implementation(operator.kind))
        sink.deliver(result, node_id, payload)
    for sink in set(sinks.values()):
        sink.finish_delivery(result)
