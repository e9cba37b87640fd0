"""Running a job: an ExecutionGraph on an executor, to results, printed output and final metrics."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flowmagic.errors import JobCancelledError, JobError, ProgramError, UnsupportedSourceError
from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.runtime.file_sink import InProgressFiles
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.runtime.registry import implementation
from flowmagic.runtime.result import JobResult

if TYPE_CHECKING:
    from flowmagic.runtime.continuous.job import ContinuousJob, EpochOutput
    from flowmagic.vocabulary.restart_strategy import RestartStrategy

__all__ = [
    "EXECUTORS",
    "ContinuousOptions",
    "JobResult",
    "echo_output",
    "execute",
    "is_unbounded",
    "start_continuous",
    "trust_savepoint",
]

#: The executors a job can run on: Spark (the default) and this Python process.
EXECUTORS = ("spark", "local")


@dataclass(frozen=True)
class ContinuousOptions:
    """How an unbounded job runs: Flink's checkpointing and savepoint-restore settings."""

    #: ``execution.checkpointing.interval`` in ms; None: checkpointing disabled.
    checkpoint_interval_ms: int | None = None
    #: Where checkpoints go (a path or ``file://`` URI); None: a temporary directory.
    checkpoint_storage: str | None = None
    #: ``execution.savepoint.path``: the savepoint (or retained checkpoint) to restore from.
    savepoint_path: str | None = None
    #: ``execution.savepoint.ignore-unclaimed-state``.
    allow_non_restored_state: bool = False
    #: ``execution.checkpointing.externalized-checkpoint-retention`` (the mode's name).
    checkpoint_retention: str = "NO_EXTERNALIZED_CHECKPOINTS"
    #: ``execution.checkpointing.num-retained``.
    checkpoints_retained: int = 1
    #: ``restart-strategy.type`` and its options; None: Flink's default (exponential-delay
    #: with checkpointing, else none).
    restart_strategy: RestartStrategy | None = None
    #: ``execution.checkpointing.savepoint-dir``: where savepoints go when none is named.
    savepoint_directory: str | None = None


def is_unbounded(graph: ExecutionGraph) -> bool:
    """Whether a source of ``graph`` is unbounded: the job then runs in the continuous mode."""
    return any(
        node.source_kind is not None and not node.bounded for node in graph.job_graph.stream_graph.nodes.values()
    )


def start_continuous(
    graph: ExecutionGraph,
    *,
    spark: Any = None,
    options: ContinuousOptions = ContinuousOptions(),
    on_output: Callable[[EpochOutput], None] | None = None,
    monitor: JobMonitor | None = None,
) -> ContinuousJob:
    """Start the unbounded job ``graph`` on Spark and return its client at once."""
    from flowmagic.runtime.continuous.job import ContinuousJob

    if graph.job_type == "BATCH":
        raise ProgramError(
            "Detected an UNBOUNDED source with the 'execution.runtime-mode' set to 'BATCH'. This combination is "
            "not allowed, please set the 'execution.runtime-mode' to STREAMING or AUTOMATIC"
        )
    return ContinuousJob(
        graph,
        spark=spark,
        checkpoint_interval_ms=options.checkpoint_interval_ms,
        checkpoint_storage=options.checkpoint_storage,
        savepoint_path=options.savepoint_path,
        allow_non_restored_state=options.allow_non_restored_state,
        checkpoint_retention=options.checkpoint_retention,
        checkpoints_retained=options.checkpoints_retained,
        on_output=on_output,
        monitor=monitor,
        restart_strategy=options.restart_strategy,
        savepoint_directory=options.savepoint_directory,
    ).start()


def trust_savepoint(path: str, *, spark: Any = None) -> str:
    """Sign the savepoint at ``path`` with this user's state key, so that jobs restore from it:
    one copied from another user or machine (signed with their key), or written by a
    flowmagic that did not sign savepoints. Do it only for a savepoint you trust: restoring
    unpickles its state. Its paths must stay inside it and its files must hold what its
    manifest recorded; ``spark``'s S3A settings reach an ``s3a://`` path."""
    from flowmagic.runtime.continuous.state_store import trust_snapshot
    from flowmagic.runtime.continuous.storage import Storage, s3a_options

    storage = Storage(path)
    if not storage.is_local:
        from flowmagic.runtime.spark.session import get_spark_session

        storage = Storage(path, s3a_options(get_spark_session(spark).conf.getAll))
    trust_snapshot(storage)
    return path


def _run_continuous(
    graph: ExecutionGraph,
    *,
    spark: Any,
    options: ContinuousOptions,
    on_progress: Callable[[JobMonitor], None] | None,
    cancel_event: threading.Event | None,
    monitor: JobMonitor | None,
    echo: bool,
) -> JobResult:
    """Run an unbounded job until it ends or is cancelled, printing what it prints as it goes."""
    job = start_continuous(
        graph, spark=spark, options=options, monitor=monitor, on_output=echo_output if echo else None
    )
    try:
        while not job.get_job_status().is_globally_terminal:
            job.wait(0.4)
            if cancel_event is not None and cancel_event.is_set():
                raise KeyboardInterrupt
            if on_progress is not None:
                on_progress(job.monitor)
    except BaseException as error:
        job.cancel()
        if isinstance(error, KeyboardInterrupt):
            raise JobCancelledError(f"Job {graph.job_name!r} was cancelled.") from None
        raise
    return job.result()


def echo_output(output: EpochOutput) -> None:
    """Print what an epoch's print sinks printed, to this process's stdout and stderr."""
    for to_stderr, line in output.printed:
        print(line, file=sys.stderr if to_stderr else sys.stdout)


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
    continuous: ContinuousOptions = ContinuousOptions(),
) -> JobResult:
    """Run the ExecutionGraph ``graph`` and wait for it.

    ``executor`` is ``"spark"`` (``spark``, else the active or an embedded session) or
    ``"local"`` (this process, see :mod:`flowmagic.runtime.local`). Print sinks' lines go to
    this process's stdout/stderr when ``echo`` is true, after the job succeeded, subtask by
    subtask. ``on_progress(monitor)`` is called about twice a second while the job runs.
    ``metrics=False`` turns Spark's live metrics channel off.

    A job with an unbounded source runs in the continuous mode (see
    :mod:`flowmagic.runtime.continuous`) with ``continuous`` options, until it is cancelled
    (interrupt, or ``cancel_event``); its print sinks print as it goes.
    """
    if executor not in EXECUTORS:
        raise ProgramError(f"Unknown executor {executor!r}: use one of {', '.join(EXECUTORS)}.")
    if is_unbounded(graph):
        if executor != "spark":
            raise UnsupportedSourceError(
                f"Job {graph.job_name!r} reads an unbounded source: it runs in the continuous mode, on Spark only."
            )
        return _run_continuous(
            graph,
            spark=spark,
            options=continuous,
            on_progress=on_progress,
            cancel_event=cancel_event,
            monitor=monitor,
            echo=echo,
        )
    if monitor is None:
        monitor = JobMonitor(graph.job_name)
    for vertex in graph.vertices.values():
        if vertex.id not in monitor.vertices:
            monitor.add_vertex(vertex.id, vertex.name, vertex.parallelism)
    unfinished = InProgressFiles(graph.job_graph.stream_graph.nodes.values())
    try:
        if executor == "local":
            from flowmagic.runtime.local import run_locally

            items = run_locally(graph, monitor, on_progress=on_progress, cancel_event=cancel_event)
        else:
            # Only a Spark run loads pyspark.
            from flowmagic.runtime.spark import run_on_spark

            items = run_on_spark(
                graph, monitor, spark=spark, on_progress=on_progress, cancel_event=cancel_event, metrics=metrics
            )
    except KeyboardInterrupt:
        # Before the job started (a Spark session starting, say): the job is cancelled too.
        unfinished.discard_new()
        raise JobCancelledError(f"Job {graph.job_name!r} was cancelled.") from None
    except BaseException:
        unfinished.discard_new()
        raise
    result = JobResult(
        job_name=graph.job_name,
        job_type=graph.job_type,
        state=monitor.state,
        duration=(monitor.end_time or 0) - (monitor.start_time or 0),
    )
    _deliver(graph, items, result)
    # What failed or killed attempts wrote was never committed.
    unfinished.discard_new()
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
