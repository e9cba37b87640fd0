"""Running a job: from a StreamGraph to results, printed output and final metrics."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flowmagic.errors import UnsupportedSourceError
from flowmagic.graph.stream_graph import StreamGraph
from flowmagic.runtime.metrics import JobMonitor

__all__ = ["JobResult", "execute"]


@dataclass
class JobResult:
    """The outcome of a finished job: what its sinks produced and the final metrics."""

    job_name: str
    job_type: str
    state: str
    duration: float
    #: Sink node id -> its records in subtask order (``execute_and_collect``).
    results: dict[int, list[Any]] = field(default_factory=dict, repr=False)
    #: What the print sinks printed, as ``(to_stderr, line)``, subtask by subtask.
    printed: list[tuple[bool, str]] = field(default_factory=list, repr=False)
    #: Files the file sinks committed.
    committed: list[str] = field(default_factory=list, repr=False)
    metrics: dict[str, Any] = field(default_factory=dict, repr=False)

    def collected(self, node_id: int) -> list[Any]:
        """The records the sink node ``node_id`` received, in subtask order."""
        return self.results.get(node_id, [])

    def __repr__(self) -> str:
        return (
            f"<JobResult {self.job_name!r} {self.state} in {self.duration:.2f}s: "
            f"{len(self.printed)} printed lines, {len(self.committed)} committed files>"
        )


def _check_bounded(graph: StreamGraph) -> None:
    for node in graph.nodes.values():
        if node.source_kind is not None and not node.bounded:
            raise UnsupportedSourceError(
                f"{node.name!r} is unbounded: flowmagic runs bounded jobs on Spark for now, and a continuous "
                "mode (Spark Structured Streaming micro-batches) is planned. Use a bounded source "
                "(from_collection, from_sequence, read_text_file, from_datagen(count=...))."
            )


def execute(
    graph: StreamGraph,
    *,
    spark: Any = None,
    on_progress: Callable[[JobMonitor], None] | None = None,
    cancel_event: threading.Event | None = None,
    monitor: JobMonitor | None = None,
    echo: bool = True,
    metrics: bool = True,
) -> JobResult:
    """Run ``graph`` on Spark (``spark`` or the active/embedded session) and wait for it.

    Print sinks' lines go to this process's stdout/stderr when ``echo`` is true, after the
    job succeeded, subtask by subtask. ``on_progress(monitor)`` is called about twice a
    second while the job runs. ``metrics=False`` turns the live metrics channel off.
    """
    from flowmagic.runtime.spark import run_on_spark

    _check_bounded(graph)
    execution_graph = graph.get_job_graph().get_execution_graph()
    if monitor is None:
        monitor = JobMonitor(execution_graph.job_name)
    for vertex in execution_graph.vertices.values():
        if vertex.id not in monitor.vertices:
            monitor.add_vertex(vertex.id, vertex.name, vertex.parallelism)
    items = run_on_spark(
        execution_graph, monitor, spark=spark, on_progress=on_progress, cancel_event=cancel_event, metrics=metrics
    )
    result = JobResult(
        job_name=execution_graph.job_name,
        job_type=execution_graph.job_type,
        state=monitor.state,
        duration=(monitor.end_time or 0) - (monitor.start_time or 0),
    )
    kinds = {node.id: node.operator.kind for node in graph.nodes.values() if node.operator is not None}
    for (node_id, _subtask), payload in items:
        kind = kinds.get(node_id)
        if kind == "print":
            result.printed.append(payload)
        elif kind == "sink_committer":
            _action, in_progress, final = payload
            shutil.move(in_progress, final)
            result.committed.append(final)
        else:
            result.results.setdefault(node_id, []).append(payload)
    for directory in {os.path.dirname(path) for path in result.committed}:
        shutil.rmtree(os.path.join(directory, ".in-progress"), ignore_errors=True)
    result.metrics = monitor.snapshot()
    if echo:
        for to_stderr, line in result.printed:
            print(line, file=sys.stderr if to_stderr else sys.stdout)
    return result
