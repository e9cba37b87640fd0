"""Running a job: an ExecutionGraph on an executor, to results, printed output and final metrics."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flowmagic.errors import JobCancelledError, JobError, ProgramError
from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.runtime.connectors.file_sink import InProgressFiles
from flowmagic.runtime.continuous.job import JobStatus
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.runtime.registry import implementation
from flowmagic.runtime.result import JobResult, echo_printed
from flowmagic.vocabulary.pipeline_config import ContinuousOptions

if TYPE_CHECKING:
    from flowmagic.runtime.continuous.job import ContinuousJob
    from flowmagic.runtime.continuous.output import EpochOutput

__all__ = [
    "EXECUTORS",
    "BoundedJob",
    "JobResult",
    "echo_output",
    "execute",
    "start_continuous",
    "trust_savepoint",
]

#: The executors a bounded job can run on: Spark (the default) and this Python process.
EXECUTORS = ("spark", "local")


def start_continuous(
    graph: ExecutionGraph,
    *,
    spark: Any = None,
    options: ContinuousOptions | None = None,
    on_output: Callable[[EpochOutput], None] | None = None,
    monitor: JobMonitor | None = None,
) -> ContinuousJob:
    """Start the unbounded job ``graph`` on Spark and return its client at once."""
    from flowmagic.runtime.continuous.coordinator import EpochCoordinator
    from flowmagic.runtime.continuous.job import ContinuousJob

    if options is None:
        options = ContinuousOptions()
    if graph.job_type == "BATCH":
        raise ProgramError(
            "Detected an UNBOUNDED source with the 'execution.runtime-mode' set to 'BATCH'. This combination is "
            "not allowed, please set the 'execution.runtime-mode' to STREAMING or AUTOMATIC"
        )
    coordinator = EpochCoordinator(
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
    )
    return ContinuousJob(coordinator, savepoint_directory=options.savepoint_directory).start()


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


def echo_output(output: EpochOutput) -> None:
    """Print what an epoch's print sinks printed, to this process's stdout and stderr."""
    echo_printed(output.printed)


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
    """Run the bounded ExecutionGraph ``graph`` and wait for it.

    ``executor`` is ``"spark"`` (``spark``, else the active or an embedded session) or
    ``"local"`` (this process, see :mod:`flowmagic.runtime.local`). Print sinks' lines go to
    this process's stdout/stderr when ``echo`` is true, after the job succeeded, subtask by
    subtask. ``on_progress(monitor)`` is called about twice a second while the job runs.
    ``metrics=False`` turns Spark's live metrics channel off. Unbounded jobs run in the
    continuous mode (:func:`start_continuous`); :mod:`flowmagic.executors` chooses.
    """
    if executor not in EXECUTORS:
        raise ProgramError(f"Unknown executor {executor!r}: use one of {', '.join(EXECUTORS)}.")
    monitor = _monitor_of(graph, monitor)
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


class BoundedJob:
    """A bounded job running on the local or Spark executor, and its client (Flink's
    ``JobClient``): it runs in a driver thread of its own, so that the caller can follow,
    cancel or wait for it as for a continuous job."""

    def __init__(
        self,
        graph: ExecutionGraph,
        *,
        executor: str,
        spark: Any = None,
        cancel_event: threading.Event | None = None,
        monitor: JobMonitor | None = None,
        metrics: bool = True,
    ):
        self.graph = graph
        self.job_id = uuid.uuid4().hex
        # Its vertices are known from the start: the caller may show the job before it runs.
        self.monitor = _monitor_of(graph, monitor)
        self._executor = executor
        self._spark = spark
        self._metrics = metrics
        self._cancel = cancel_event if cancel_event is not None else threading.Event()
        self._outcome: JobResult | BaseException | None = None
        self._driver = threading.Thread(target=self._run, name=f"flowmagic-driver-{graph.job_name}", daemon=True)

    def start(self) -> BoundedJob:
        self._driver.start()
        return self

    def _run(self) -> None:
        try:
            self._outcome = execute(
                self.graph,
                executor=self._executor,
                spark=self._spark,
                cancel_event=self._cancel,
                monitor=self.monitor,
                echo=False,
                metrics=self._metrics,
            )
        except BaseException as error:
            self._outcome = error

    def get_job_id(self) -> str:
        return self.job_id

    def get_job_status(self) -> JobStatus:
        if self._driver.is_alive() or self._outcome is None:
            if self._cancel.is_set():
                return JobStatus.CANCELLING
            return JobStatus.RUNNING if self.monitor.start_time is not None else JobStatus.INITIALIZING
        if isinstance(self._outcome, JobResult):
            return JobStatus.FINISHED
        return JobStatus.CANCELED if isinstance(self._outcome, JobCancelledError) else JobStatus.FAILED

    def cancel(self, timeout: float = 35) -> None:
        """Cancel the job and wait until it ended; raises a :class:`JobError` if it has not
        ended within ``timeout`` s."""
        if self._outcome is not None:
            return
        self._cancel.set()
        self._driver.join(timeout)
        if self._driver.is_alive():
            raise JobError(f"Job {self.graph.job_name!r} is still running {timeout} s after its cancel.")

    def trigger_savepoint(self, savepoint_directory: Any = None, timeout: float | None = None) -> str:
        raise self._no_savepoints()

    def stop_with_savepoint(self, *args: Any, **kwargs: Any) -> str:
        raise self._no_savepoints()

    def _no_savepoints(self) -> JobError:
        return JobError(
            f"Job {self.graph.job_name!r} is bounded: savepoints are taken of unbounded jobs, which run in the "
            "continuous mode."
        )

    def wait(self, timeout: float | None = None) -> JobStatus:
        """Wait until the job ended (or ``timeout`` s); raise its failure if it failed."""
        self._driver.join(timeout)
        if isinstance(self._outcome, BaseException):
            raise self._outcome
        return self.get_job_status()

    def result(self) -> JobResult:
        """The job's :class:`JobResult` once it ended; its failure if it failed."""
        self.wait()
        assert isinstance(self._outcome, JobResult)
        return self._outcome

    def __repr__(self) -> str:
        return f"<BoundedJob {self.graph.job_name!r} on {self._executor} {self.get_job_status()}>"


def _monitor_of(graph: ExecutionGraph, monitor: JobMonitor | None) -> JobMonitor:
    """``monitor`` (a new one if None) with every vertex of ``graph``."""
    if monitor is None:
        monitor = JobMonitor(graph.job_name)
    for vertex in graph.vertices.values():
        if vertex.id not in monitor.vertices:
            monitor.add_vertex(vertex.id, vertex.name, vertex.parallelism)
    return monitor


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
