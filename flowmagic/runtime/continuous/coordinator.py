"""A running unbounded job on the driver: Spark's micro-batch loop, one epoch per batch.

:class:`EpochCoordinator` starts one Structured Streaming query with ``foreachBatch`` over a
clock that makes a batch run on every trigger, and the job's Spark streaming DataFrames if it
reads any (its sources' feeds: :mod:`~flowmagic.runtime.continuous.feeds`). Each batch is one
epoch: one Spark job of the bounded runtime's RDDs whose tasks continue (or restore) their
subtasks, write their state, and return what their sinks made. Then the driver writes the
epoch's manifest, which completes the epoch, and hands on the output. An epoch whose
manifest exists is never run again, so a batch Spark replays after a restart changes nothing
twice. Admission control (:mod:`~flowmagic.runtime.continuous.admission`) sizes the epochs:
the driver hands each epoch its range of every source's offsets, and logs it with the epoch's
time before the epoch first runs, so that a replayed batch reads the same records.

A failed query (an epoch's Spark job failed after Spark's own task retries) restarts under
the job's restart strategy (:mod:`~flowmagic.vocabulary.restart_strategy`): a new
query goes on from the last completed epoch, whose batch Spark replays, until the strategy
says the job fails for good. Checkpoints (what the job restores from and retains) are
:mod:`~flowmagic.runtime.continuous.checkpoints`; the job's client,
:class:`~flowmagic.runtime.continuous.job.ContinuousJob`, holds its coordinator.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Self

from flowmagic.errors import JobCancelledError, JobError, JobFailedError
from flowmagic.graph.execution_graph import ExecutionGraph, ExecutionState
from flowmagic.runtime.backpressure import SubtaskLoad, consumers_of, derive_load
from flowmagic.runtime.connectors.file_sink import sink_directories
from flowmagic.runtime.continuous.admission import AdmissionControl
from flowmagic.runtime.continuous.checkpoints import CheckpointStats, CheckpointStore, discard_savepoint
from flowmagic.runtime.continuous.epoch import EpochContext, EpochSubtaskFunction
from flowmagic.runtime.continuous.epoch_reports import epoch_reports, take_reports
from flowmagic.runtime.continuous.feeds import Feed, FeedContext, SourceReaderFailed
from flowmagic.runtime.continuous.file_commit import FileCommits
from flowmagic.runtime.continuous.output import EpochOutput, OutputFanOut
from flowmagic.runtime.continuous.sources import TICK_MS, clock_frame, split_range
from flowmagic.runtime.continuous.state_store import (
    Checksum,
    Manifest,
    StateDeclaration,
    copy_savepoint,
    write_manifest,
)
from flowmagic.runtime.continuous.status import JobStatus
from flowmagic.runtime.continuous.storage import Storage
from flowmagic.runtime.failures import failure_message
from flowmagic.runtime.metric_reports import (
    CheckpointRecord,
    EventTimeReport,
    OperatorStateReport,
    SinkFilesReport,
    SubtaskUpdate,
)
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.runtime.plan import VertexPlan, build_plans, pickle_plan
from flowmagic.vocabulary.restart_strategy import RestartStrategy

__all__ = ["MAX_RECORDS_PER_EPOCH", "SLOW_PYTHON_RETRIES", "EpochCoordinator", "SavepointRequest"]

#: The most records one epoch takes from one of flowmagic's sources (bounded memory).
MAX_RECORDS_PER_EPOCH = 500_000
#: How often in a row a query whose source's Python process started too late on the driver
#: is started again before the job fails over (see ``EpochCoordinator._python_started_late``).
SLOW_PYTHON_RETRIES = 3


@dataclass
class SavepointRequest:
    """A savepoint asked for: the epoch that completes next takes it."""

    path: str
    stop: bool
    #: Flink's drain (``advance_to_end_of_time``): the epoch that takes the savepoint ends
    #: the job's input first, so that event-time windows and timers fire.
    drain: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    result: str | None = None
    error: BaseException | None = None


class EpochCoordinator:
    """An unbounded job's epochs on Spark: its query, sources, admission, restarts and
    savepoint requests."""

    def __init__(
        self,
        graph: ExecutionGraph,
        *,
        spark: Any = None,
        checkpoint_interval_ms: int | None = None,
        checkpoint_storage: str | None = None,
        savepoint_path: str | None = None,
        allow_non_restored_state: bool = False,
        checkpoint_retention: str = "NO_EXTERNALIZED_CHECKPOINTS",
        checkpoints_retained: int = 1,
        on_output: Callable[[EpochOutput], None] | None = None,
        monitor: JobMonitor | None = None,
        restart_strategy: RestartStrategy | None = None,
    ):
        self.graph = graph
        self.job_id = uuid.uuid4().hex
        self.spark = spark
        self.checkpoint_interval_ms = checkpoint_interval_ms
        self.plans = build_plans(graph)
        #: Its snapshots: what it restores from, retains and forgets.
        self.store = CheckpointStore(
            graph,
            self.plans,
            self.job_id,
            spark=spark,
            checkpoint_storage=checkpoint_storage,
            retention=checkpoint_retention,
            retained=checkpoints_retained,
        )
        self.store.restore_from(savepoint_path, allow_non_restored_state)
        self.storage = self.store.storage
        self.operator_ids = self.store.operator_ids
        #: The driver's own files (socket logs, the planner's ranges): in the checkpoint
        #: directory when it is on this machine's file system, else beside it here.
        self.local_dir = (
            self.storage.local_path if self.storage.is_local else tempfile.mkdtemp(prefix="flowmagic-job-local-")
        )
        self.output = OutputFanOut(on_output)
        self.monitor = monitor or JobMonitor(graph.job_name)
        for vertex in graph.vertices.values():
            if vertex.id not in self.monitor.vertices:
                self.monitor.add_vertex(vertex.id, vertex.name, vertex.parallelism)
        self.status = JobStatus.INITIALIZING
        self.error: BaseException | None = None
        #: Flink's restart strategy (its default when the program set none).
        self.restart_strategy = restart_strategy or RestartStrategy.default(checkpoint_interval_ms is not None)
        self._backoff = self.restart_strategy.backoff()
        #: How many times the job restarted (Flink's ``numRestarts``), and why it last did.
        self.restarts = 0
        self.last_failure: str | None = None
        #: What the last ``cancel()`` did to stop the running epoch (None: there was none).
        self.cancel_details: str | None = None
        #: Set by ``cancel()``: wakes a restart's backoff.
        self._cancelled = threading.Event()
        self.checkpoints = CheckpointStats()
        self.epochs = 0
        stream_graph = graph.job_graph.stream_graph
        previous = self.store.previous
        #: Per source node id, its position in the savepoint or checkpoint restored from.
        self._restored_sources = self.store.source_positions_to_restore()
        #: Per operator id, the keyed states its functions declared (and the snapshot's).
        self._declarations: dict[str, dict[str, StateDeclaration]] = {
            operator_id: dict(previous.operators[operator_id].states)
            for operator_id in self.operator_ids.values()
            if previous is not None and operator_id in previous.operators
        }
        #: File sinks' committables until a checkpoint commits them (a restored job's first).
        self._commits = FileCommits(sink_directories(stream_graph.nodes.values()), previous.pending if previous else ())
        #: The part files the job's file sinks committed.
        self.committed: list[str] = []
        if self._commits.directories and checkpoint_interval_ms is None:
            warnings.warn(
                f"Job {graph.job_name!r} writes with a FileSink: part files are committed on checkpoints, and "
                "checkpointing is disabled, so they stay in progress until the job's input ends or a savepoint "
                "is taken. Enable it: env.enable_checkpointing(interval_ms).",
                stacklevel=2,
            )
        self._last_checkpoint_time = time.time()
        self._requests: list[SavepointRequest] = []
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._query: Any = None
        #: Per node whose subtasks hand results to the driver, where its sink takes them.
        self._deliver_epoch: dict[int, Callable[[EpochOutput, int, list[Any]], None]] = {
            node_id: node.implementation.deliver_epoch_all
            for plan in self.plans.values()
            for node_id, node in plan.nodes.items()
            if node.implementation.emits_results
        }
        #: Per unbounded source (node id), its driver side: see :mod:`~flowmagic.runtime.continuous.feeds`.
        self._feeds: dict[int, Feed] = {}
        self._epoch_error: BaseException | None = None
        #: Set once the job is to run no further epoch (stopped or cancelled).
        self._ending = threading.Event()
        #: Held while an epoch runs.
        self._in_epoch = threading.Lock()
        #: Per flowmagic source, the offset its epochs have read up to (from its feed's start:
        #: a restored data generator's position; Spark's offsets start there).
        self._read_up_to: dict[int, int] = {}
        #: Per (vertex id, subtask): its busy and back-pressured time per second, over the
        #: last epoch that ran and the pause before it (Flink's busyTimeMsPerSecond, ...).
        self.load: dict[tuple[str, int], SubtaskLoad] = {}
        #: When the time ``load`` is measured over began and ended (seconds since the epoch).
        self.load_span = (0.0, 0.0)
        #: Queries started again since the last completed epoch (see ``_python_started_late``).
        self._slow_python_retries = 0
        #: Per (vertex id, subtask): its stateful operators' state after its last epoch.
        self.state_sizes: dict[tuple[str, int], list[OperatorStateReport]] = {}
        self._last_run_end = time.time()
        #: How many records an epoch admits from each source with offsets.
        self._admission = AdmissionControl(MAX_RECORDS_PER_EPOCH)
        #: The earliest processing-time timer of the job's subtasks after the last epoch.
        self._wakeup: int | None = None
        #: Per source whose offsets the driver hands out (node id), its parallelism.
        self._offset_feeds: dict[int, int] = {}

    def start(self) -> Self:
        """Start the micro-batch loop (returns at once; the job runs in Spark's stream thread)."""
        from pyspark import cloudpickle

        from flowmagic.runtime.spark.placement import executor_lookup
        from flowmagic.runtime.spark.session import get_spark_session
        from flowmagic.runtime.spark.shipping import ship_flowmagic

        # The plans are pickled once, here: a function that cannot be pickled is named now,
        # rather than by PySpark in the stream's thread, and epochs ship the bytes.
        self._payloads: dict[str, bytes] = {
            plan_id: pickle_plan(plan, cloudpickle.dumps) for plan_id, plan in self.plans.items()
        }
        # Flink's committer commits a restored job's committables as soon as it starts.
        self.committed.extend(self._commits.commit())
        session = get_spark_session(self.spark)
        self._spark_context = session.sparkContext
        # The first job of a SparkContext ships flowmagic and probes its workers (a Spark job,
        # Python workers to start) while the driver makes the stream's frames (Spark loads its
        # streaming classes): seconds each on a cold or busy machine, together fewer.
        shipped: list[BaseException | None] = []

        def ship() -> None:
            try:
                ship_flowmagic(session.sparkContext, arrow=True)
            except BaseException as error:
                shipped.append(error)
            else:
                shipped.append(None)

        shipping = threading.Thread(target=ship, name=f"flowmagic-ship-{self.job_id[:8]}", daemon=True)
        shipping.start()
        try:
            frames = [clock_frame(session)]
        finally:
            shipping.join()
        if shipped[0] is not None:
            raise shipped[0]
        self.monitor.executor_lookup = executor_lookup(session.sparkContext)
        self._reports = epoch_reports(session.sparkContext)
        for plan in self.store.source_plans():
            node = plan.nodes[plan.head]
            if node.bounded:
                continue
            node_id = plan.head
            context = FeedContext(
                node_id,
                plan.name,
                plan.parallelism,
                directory=os.path.join(self.local_dir, "sources", str(node_id)),
                restored=self._restored_sources.get(node_id),
                read_restored=self.store.restore_storage.read,
            )
            feed = self._feeds[node_id] = node.implementation.open_feed(node.operator.params, context)
            if feed.has_offsets:
                self._offset_feeds[node_id] = plan.parallelism
                self._read_up_to[node_id] = feed.start_offset
            frame = feed.frame(session)
            if frame is not None:
                frames.append(frame)
        union = frames[0]
        for frame in frames[1:]:
            union = union.unionByName(frame, allowMissingColumns=True)
        for feed in self._feeds.values():
            feed.start()
        self.status = JobStatus.RUNNING
        self.monitor.state = ExecutionState.RUNNING
        self.monitor.start_time = time.time()
        self.monitor.mark(ExecutionState.RUNNING)
        self._union = union
        try:
            self._start_query()
        except Exception as error:
            if "CHECKPOINT_FILE_MANAGER" not in str(error):
                raise
            self.error = JobError(
                f"Checkpoint storage {self.storage.location!r}: Spark keeps its stream's offsets there too "
                f"({self.storage.child('spark').location}) and cannot open it. Give Spark the connector of this file "
                "system (for "
                "s3a://, the hadoop-aws package of Spark's Hadoop version), or keep checkpoints on a shared path "
                "and savepoints on S3."
            )
            self.status = JobStatus.FAILED
            self._end()
            raise self.error from None
        threading.Thread(target=self._watch, name=f"flowmagic-watch-{self.job_id[:8]}", daemon=True).start()
        return self

    def cancel(self, deadline: float) -> bool:
        """Run no further epoch, and cancel the running epoch's Spark job (trying until
        ``deadline``, a :func:`time.monotonic` time): the job ends CANCELED. False if it had
        ended already."""
        with self._lock:
            if self.status.is_globally_terminal:
                return False
            self.status = JobStatus.CANCELLING
            self._cancelled.set()
        self.monitor.state = ExecutionState.CANCELING
        if self._query is not None:
            self._interrupt_epoch(deadline)
            self._stop_query()
        return True

    def wait_ended(self, timeout: float | None = None) -> bool:
        """Wait until the job ended (or ``timeout`` s); whether it has."""
        return self._finished.wait(timeout)

    def take_savepoint(self, request: SavepointRequest, timeout: float | None) -> str:
        """The path of ``request``'s savepoint, taken by the next epoch that completes
        within ``timeout`` s (then the job ends if it is a stop's)."""
        with self._lock:
            self._requests.append(request)
        if not request.done.wait(timeout):
            with self._lock:
                if request in self._requests:
                    self._requests.remove(request)
            raise JobError(f"No epoch completed within {timeout} s: the savepoint was not taken.")
        if request.error is not None:
            raise request.error
        assert request.result is not None
        if request.stop:
            self._finished.wait(60)
        return request.result

    @property
    def sink_files(self) -> SinkFilesReport | None:
        """The file sinks' part files committed and pending (None: the job has no file sink)."""
        if not self._commits.directories:
            return None
        return SinkFilesReport(committed=len(self.committed), pending=len(self._commits.pending))

    def _start_query(self) -> None:
        """Start the Structured Streaming query; one over the same Spark checkpoint goes on
        from the last batch Spark committed, and replays the batch that did not complete."""
        writer = (
            self._union.writeStream.foreachBatch(self._run_epoch)
            # The first batch runs at once; later ones as soon as the last ended, but an
            # idle job's no more often than every tick.
            .trigger(processingTime=f"{TICK_MS} milliseconds")
            .option("checkpointLocation", self.storage.child("spark").location)
            .queryName(f"flowmagic-{self.graph.job_name}-{self.job_id[:8]}")
        )
        self._query = writer.start()

    def _watch(self) -> None:
        """Wait for the query's end; restart a failed one as the restart strategy allows,
        and settle the job's status."""
        while True:
            try:
                self._query.awaitTermination()
            except Exception as error:
                if self.status is JobStatus.CANCELLING:
                    break  # the cancel interrupted the running epoch: no failure of the job
                if self._python_started_late(error) or self._restart_after(error):
                    continue
            break
        self._end()

    def _python_started_late(self, error: BaseException) -> bool:
        """Start the query again, not counting a failure of the job, when Spark's Python
        process for the stream's source on the driver did not connect back in time: Spark
        waits a fixed 10 s for it (no setting changes that), which a busy machine can miss.
        At most ``SLOW_PYTHON_RETRIES`` times before an epoch completes again."""
        if "Python worker failed to connect back" not in str(error):
            return False
        if self._slow_python_retries >= SLOW_PYTHON_RETRIES or self._ending.is_set() or self._cancelled.is_set():
            return False
        self._slow_python_retries += 1
        try:
            self._start_query()
        except Exception:
            return False
        if self._cancelled.is_set():
            self._stop_query()
        return True

    def _restart_after(self, error: BaseException) -> bool:
        """Flink's failover: count the failure; if the strategy allows, wait its backoff and
        start a new query from the last completed epoch (True); else fail the job (False)."""
        if isinstance(self._epoch_error, SourceReaderFailed):
            # Its reader on the driver has ended, and a restart does not start it again.
            self._fail(error, recoverable=False)
            return False
        self._backoff.notify_failure()
        if not self._backoff.can_restart() or self._ending.is_set():
            self._fail(error)
            return False
        with self._lock:
            if self._cancelled.is_set():
                return False  # _end settles it as CANCELED
            self.status = JobStatus.RESTARTING
        self.restarts += 1
        self.last_failure = self._failure(error).args[0]
        if self._cancelled.wait(self._backoff.backoff_ms() / 1000):
            return False  # cancelled while waiting: _end settles it as CANCELED
        self._epoch_error = None
        try:
            self._start_query()
        except Exception as start_error:
            self._fail(start_error)
            return False
        with self._lock:
            if not self._cancelled.is_set():
                self.status = JobStatus.RUNNING
        if self._cancelled.is_set():
            # cancel() came while the query started, and may have seen none to stop.
            self._stop_query()
        return True

    def _failure(self, error: BaseException) -> JobFailedError:
        from flowmagic.runtime.spark.subtask import failure_from

        # The epoch's own error says more than the query's, which wraps it in Spark's words.
        cause = self._epoch_error if self._epoch_error is not None else error
        if isinstance(cause, JobError):
            return JobFailedError(str(cause))
        failure = failure_from(cause, self.monitor)
        return JobFailedError(failure_message(failure, cause, "Spark"), failure)

    def _fail(self, error: BaseException, recoverable: bool = True) -> None:
        failure = self._failure(error)
        if recoverable and self.restart_strategy.type != "disable":
            # Flink's JobException when the strategy allows no further restart.
            failure = JobFailedError(
                f"{failure.args[0]}\nRecovery is suppressed by {self.restart_strategy.describe()} "
                f"(after {self.restarts} restart{'' if self.restarts == 1 else 's'}).",
                failure.failure,
            )
        self.error = failure
        self.status = JobStatus.FAILED

    def _end(self) -> None:
        for feed in self._feeds.values():
            feed.stop()
        if self.status is JobStatus.CANCELLING:
            self.status = JobStatus.CANCELED
        elif self.status is JobStatus.RUNNING:
            self.status = JobStatus.FINISHED
        final = {
            JobStatus.CANCELED: ExecutionState.CANCELED,
            JobStatus.FAILED: ExecutionState.FAILED,
        }.get(self.status, ExecutionState.FINISHED)
        self.monitor.mark(final)
        self.monitor.state = final
        self.monitor.end_time = time.time()
        with self._lock:
            for request in self._requests:
                request.error = JobError(f"Job {self.graph.job_name!r} ended ({self.status}) before the savepoint.")
                request.done.set()
            self._requests.clear()
        self.store.discard(self.status)
        self._finished.set()
        if self.store.temporary_root and not self.store.retained:
            shutil.rmtree(self.store.temporary_root, ignore_errors=True)

    def _run_epoch(self, batch: Any, batch_id: int) -> None:
        """``foreachBatch``: run batch ``batch_id`` as epoch ``batch_id``."""
        if self._ending.is_set():
            # Stopped with a savepoint (or cancelled): the query may start one more batch
            # before it stops; it must change nothing past the savepoint.
            return
        read_up_to, completed = dict(self._read_up_to), self.epochs
        try:
            with self._in_epoch:
                self._epoch(batch, int(batch_id))
        except BaseException as error:
            if self.epochs == completed:
                # A restarted query replays this batch: it reads the same ranges again.
                self._read_up_to = read_up_to
            self._epoch_error = error
            # Spark's stream thread matches a regular expression over the message of what
            # foreachBatch raised, which over a Spark job's failure (Java stack traces and
            # all) can die of a StackOverflowError: it gets a short error, the job the epoch's.
            ended = "was cancelled" if self._cancelled.is_set() else f"failed: {type(error).__name__}"
            raise JobError(f"Epoch {batch_id} of job {self.graph.job_name!r} {ended}.") from None

    def _stop_query(self) -> threading.Thread:
        """Run no further epoch, and stop the query once the running epoch (if any) is done.

        Stopping a query while its batch runs a Spark job interrupts that job, and Spark's
        stream thread then dies of a StackOverflowError it prints (an error of its own): the
        epoch is let finish instead, which takes well under a second, or, on a cancel, its
        Spark job is cancelled first (see :meth:`cancel`), which ends the epoch and its query
        with an error the watcher knows for the cancel's.
        """
        self._ending.set()
        query = self._query

        def stop() -> None:
            with self._in_epoch:
                pass
            # A query whose Spark session stopped first (a notebook's kernel shutting down)
            # has nothing left to stop; a failure of the query shows in awaitTermination.
            with contextlib.suppress(Exception):
                query.stop()

        stopper = threading.Thread(target=stop, name=f"flowmagic-stop-{self.job_id[:8]}", daemon=True)
        stopper.start()
        return stopper

    def _interrupt_epoch(self, deadline: float) -> None:
        """Cancel the Spark job of the running epoch, if one runs: its ``collect()`` then
        fails, and the query with it, which the watcher takes for the cancel (stopping the
        query instead would interrupt the job under Spark's stream thread, which then dies
        of a StackOverflowError)."""
        self._ending.set()
        interrupted = False
        while self._in_epoch.locked() and time.monotonic() < deadline:
            # Again until the epoch ends: its job may not have been submitted yet.
            self._spark_context.cancelJobGroup(self._job_group)
            interrupted = True
            if self._in_epoch.acquire(timeout=0.5):
                self._in_epoch.release()
                break
        if interrupted:
            self.cancel_details = (
                f"the Spark jobs of job group {self._job_group} were cancelled, which interrupted the running "
                "epoch's tasks (Spark kills a Python worker still busy spark.python.task.killTimeout later)"
            )
            if self._in_epoch.locked():
                self.cancel_details += ", and the epoch has not ended"

    def _epoch(self, batch: Any, epoch: int) -> None:
        previous = self.store.previous
        own = self.store.own
        if own is not None and epoch <= own.epoch:
            return  # completed before: its manifest is written and its output was handed on
        began = time.time()
        admission = self._admitted()
        now, ends = self.store.epoch_plan(epoch, lambda: self._next_ends(admission))
        start_time = own.time if own is not None else now
        for node_id, feed in self._feeds.items():
            feed.check(self._read_up_to.get(node_id, 0))
        session = batch.sparkSession
        sc = session.sparkContext
        ranges = self._epoch_ranges(ends)
        taken = {
            node_id: sum(end - start for share in shares for start, end in share) for node_id, shares in ranges.items()
        }
        # Whether a source had more than the epoch admitted: its size then bounds the rate.
        saturated = any(count >= admission for count in taken.values())
        final = self._sources_ended() or self._drain_due()
        checkpoint = self._checkpoint_due()
        if self._idle(ranges, now, final, checkpoint):
            assert own is not None
            manifest = replace(own, epoch=epoch, time=now, offsets=dict(self._read_up_to), checkpoint=None)
            manifest.ran = own.state_epoch
            self._finish_epoch(manifest, began, EpochOutput(epoch), checkpoint=checkpoint)
            return
        context = EpochContext(
            run_id=self.job_id,
            epoch=epoch,
            start_time=start_time,
            time=now,
            storage=self.storage,
            folder=f"state/epoch-{epoch:010d}",
            operator_ids=self.operator_ids,
            restore_storage=self.store.restore_storage if previous is not None else None,
            restore_operators=dict(previous.operators) if previous is not None else {},
            restore_progress=own.progress if own is not None else None,
            restore_checksums=previous.checksums if previous is not None else {},
            # Bounded sources are read in the job's first epoch, unless they finished before
            # the snapshot it was restored from.
            read_bounded=frozenset(
                plan.id
                for plan in self.store.source_plans()
                if self.epochs == 0 and plan.nodes[plan.head].bounded and plan.head not in self._restored_sources
            ),
            end_bounded=self.epochs == 0,
            final=final,
            checkpoint=checkpoint,
            after_epoch=own.state_epoch if own is not None else -1,
        )

        def source_input(plan: VertexPlan) -> Any:
            shares = ranges.get(plan.head) or [[] for _ in range(plan.parallelism)]
            feed = self._feeds.get(plan.head)
            if feed is None:  # a bounded source reads its own input
                return sc.parallelize(shares, plan.parallelism).flatMap(_identity)
            return feed.epoch_input(sc, batch, shares)

        from flowmagic.runtime.spark.rdd_graph import build_rdds

        sc.setJobGroup(self._job_group, f"flowmagic: {self.graph.job_name} epoch {epoch}", True)
        if self._cancelled.is_set():
            # cancel() cancels the job group's Spark jobs: this one would start after it did.
            raise JobCancelledError(f"Job {self.graph.job_name!r} was cancelled.")
        items = build_rdds(
            self.graph,
            self.plans,
            sc,
            None,
            subtask_function=lambda plan: EpochSubtaskFunction(plan, self._payloads[plan.id], context, self._reports),
            source_input=source_input,
        ).collect()
        work = self._complete(epoch, now, began, items, take_reports(self._reports, epoch), final, checkpoint)
        self._admission.epoch_ran(admission, time.time() - began, saturated, work)
        if final:
            # Every source ended (or a drain ended them), and this epoch ended the job's input:
            # the job is FINISHED.
            self._stop_query()

    def _admitted(self) -> int:
        """How many records the next epoch admits from each source with offsets: as admission
        control says, but its first epochs' admission when a savepoint or a stop waits for the
        epoch (so that it answers within the fixed time of an epoch, as Flink's barrier
        overtakes no record but waits for none either)."""
        with self._lock:
            waiting = bool(self._requests)
        records = self._admission.records
        return min(records, AdmissionControl.FIRST) if waiting else records

    def _next_ends(self, admission: int) -> dict[int, int]:
        """Per source with offsets, the end of the next epoch's range: as far as its input
        goes, and ``admission`` allows."""
        return {
            node_id: self._feeds[node_id].available(self._read_up_to.get(node_id, 0), admission)
            for node_id in self._offset_feeds
        }

    def _epoch_ranges(self, ends: dict[int, int]) -> dict[int, list[list[tuple[int, int]]]]:
        """Per source with offsets, each subtask's offset ranges of the epoch that reads up
        to ``ends``."""
        ranges: dict[int, list[list[tuple[int, int]]]] = {}
        for node_id, parallelism in self._offset_feeds.items():
            start = self._read_up_to.get(node_id, 0)
            end = max(ends.get(node_id, start), start)
            ranges[node_id] = split_range(start, end, parallelism)
            self._read_up_to[node_id] = end
        return ranges

    def _idle(self, ranges: dict[int, list[list[tuple[int, int]]]], now: int, final: bool, checkpoint: bool) -> bool:
        """Whether the epoch has nothing to do, so that no Spark job runs for it: no input
        came, no timer is due, the job's input does not end (a Spark stream's batch is not
        known to be empty without a job reading it), and no checkpoint is due while file
        sinks keep part files open (their rolling policy may roll them at checkpoints)."""
        if self.epochs == 0 or final or self.store.own is None:
            return False
        if not all(feed.knows_input for feed in self._feeds.values()):
            return False
        if checkpoint and self._commits.in_use:
            return False
        if any(share for shares in ranges.values() for share in shares):
            return False
        return self._wakeup is None or now < self._wakeup

    def _sources_ended(self) -> bool:
        """Whether every unbounded source has ended (a socket can, once its reader ended and
        the epochs read all it logged; a generator and a Spark stream never end)."""
        return all(feed.ended(self._read_up_to.get(node_id, 0)) for node_id, feed in self._feeds.items())

    def _complete(
        self,
        epoch: int,
        now: int,
        began: float,
        items: list[tuple[Any, list[Any]]],
        reports: dict[tuple[str, int], dict[str, Any]],
        final: bool,
        checkpoint: bool,
    ) -> float:
        """Complete the epoch whose Spark job returned the sinks' results ``items`` and whose
        subtasks reported ``reports``; returns how long its subtasks worked, stage after
        stage (each vertex's busiest subtask)."""
        missing = [
            f"{plan.name} ({index + 1}/{plan.parallelism})"
            for vertex_id, plan in self.plans.items()
            for index in range(plan.parallelism)
            if (vertex_id, index) not in reports
        ]
        if missing:
            # Its state would be missing from the manifest: the epoch must run again.
            raise JobError(f"Epoch {epoch}: no report came from {', '.join(missing)}.")
        manifest = Manifest(epoch=epoch, time=now, offsets=dict(self._read_up_to))
        # The checksums of this epoch's files, and of earlier files its changes follow.
        own = self.store.own
        checksums = dict(own.checksums) if own is not None else {}
        output = EpochOutput(epoch)
        self._commits.begin_epoch()
        wakeups = []
        busy: dict[tuple[str, int], float] = {}
        consumers: dict[tuple[str, int], list[tuple[str, int]]] = {}
        for (vertex_id, index), payload in sorted(reports.items()):
            plan = self.plans[vertex_id]
            for operator_id, declared in payload["declarations"].items():
                self._declarations.setdefault(operator_id, {}).update(
                    (name, StateDeclaration(kind, type_info)) for name, (kind, type_info) in declared.items()
                )
            for operator_id, (state_file, delta) in payload["state"].items():
                files = self.store.chain(operator_id, plan, index) if delta else []
                if state_file is not None:
                    files.append(state_file)
                if files:
                    state = manifest.operators.setdefault(operator_id, self.store.operator_state(operator_id, plan))
                    state.files.extend(files)
            for operator_id, path in payload["operator_state"].items():
                state = manifest.operators.setdefault(operator_id, self.store.operator_state(operator_id, plan))
                state.operator_state.extend([None] * (plan.parallelism - len(state.operator_state)))
                state.operator_state[index] = path
            progress = manifest.progress.setdefault(vertex_id, [None] * plan.parallelism)
            progress[index] = payload["progress"]
            checksums.update(payload["checksums"])
            if payload["wakeup"] is not None:
                wakeups.append(payload["wakeup"])
            busy[(vertex_id, index)] = payload["busy_ms"] / 1000
            self.state_sizes[(vertex_id, index)] = [
                OperatorStateReport(
                    vertex_id,
                    index,
                    plan.nodes[node_id].name,
                    self.operator_ids[node_id],
                    keys,
                    timers,
                    size,
                    payload["whole"],
                )
                for node_id, (keys, size, timers) in payload["sizes"].items()
            ]
            consumers[(vertex_id, index)] = consumers_of(payload["channels_added"])
            stage, task = payload["spark_task"] if payload["spark_task"] is not None else (None, None)
            self.monitor.update(
                SubtaskUpdate(
                    vertex_id,
                    index,
                    state=ExecutionState.RUNNING,
                    records_in=payload["records_in"],
                    records_out=payload["records_out"],
                    watermark=payload["watermark"],
                    metrics=payload["metrics"],
                    # Where it ran, and the records it handed on per channel.
                    host=payload["host"],
                    stage=stage,
                    task=task,
                    channels_added=payload["channels_added"],
                    event_time=EventTimeReport.from_json(payload["event_time"]),
                )
            )
        for key, payloads in items:
            node_id, _subtask = key
            self._deliver_epoch[node_id](output, node_id, payloads)
        for committable in output.committables:
            self._commits.take(committable)
        manifest.checksums = {path: checksums[path] for path in manifest.files()}
        for operator_id, state in manifest.operators.items():
            state.states = dict(self._declarations.get(operator_id, {}))
        self._wakeup = min(wakeups, default=None)
        self._slow_python_retries = 0
        # Per second since the last epoch's end: the time in between, its subtasks waited.
        ended = time.time()
        self.load = derive_load(busy, consumers, ended - self._last_run_end)
        self.load_span = (self._last_run_end, ended)
        self._last_run_end = ended
        self._finish_epoch(manifest, began, output, checkpoint=checkpoint, final=final, ran=True)
        busiest: dict[str, float] = {}
        for (vertex_id, _index), seconds in busy.items():
            busiest[vertex_id] = max(busiest.get(vertex_id, 0.0), seconds)
        return sum(busiest.values())

    @property
    def _job_group(self) -> str:
        """The Spark job group of the job's epochs (interrupted when cancelled)."""
        return f"flowmagic-{self.job_id}"

    def _drain_due(self) -> bool:
        """Whether a stop-with-savepoint that drains is waiting: the epoch ends the input."""
        with self._lock:
            return any(request.drain for request in self._requests)

    def _checkpoint_due(self) -> bool:
        """Whether the epoch about to run completes a checkpoint (Flink's interval since the
        last one passed) or a savepoint (one was asked for)."""
        with self._lock:
            if self._requests:
                return True
        interval = self.checkpoint_interval_ms
        return interval is not None and (time.time() - self._last_checkpoint_time) * 1000 >= interval

    def _finish_epoch(
        self,
        manifest: Manifest,
        began: float,
        output: EpochOutput,
        *,
        checkpoint: bool,
        final: bool = False,
        ran: bool = False,
    ) -> None:
        """Write the epoch's manifest (which completes it), commit the file sinks' files if
        it completes a checkpoint (or a savepoint, or the job), then hand on what it made."""
        with self._lock:
            # A savepoint is served by an epoch that began as a checkpoint (its sinks rolled
            # their files, so the savepoint commits them); one asked for while an epoch that
            # is none ran waits for the next. A drain is served by an epoch that ended the
            # input (one that began before it was asked for did not).
            requests = [request for request in self._requests if final or (checkpoint and not request.drain)]
            self._requests = [request for request in self._requests if request not in requests]
        if checkpoint or requests or final:
            # A snapshot that may be restored from keeps where its sources were.
            self._add_source_positions(manifest)
        if checkpoint and self.checkpoint_interval_ms is not None:
            stats = self.checkpoints
            stats.completed += 1
            manifest.checkpoint = stats.completed
            stats.last_duration_ms = (time.time() - began) * 1000
            # The manifest's checksums hold every file's size: no file system call per file.
            sizes = {path: manifest.checksums[path].size for path in manifest.files() if path in manifest.checksums}
            stats.last_size_bytes = sum(sizes.values())
            stats.last_completed_at = self._last_checkpoint_time = time.time()
            own_files = f"state/epoch-{manifest.epoch:010d}/"
            stats.history.append(
                CheckpointRecord(
                    id=stats.completed,
                    epoch=manifest.epoch,
                    completed_at=stats.last_completed_at,
                    duration_ms=stats.last_duration_ms,
                    checkpointed_bytes=sum(size for path, size in sizes.items() if path.startswith(own_files)),
                    full_bytes=stats.last_size_bytes,
                )
            )
        epoch = manifest.epoch
        manifest.pending = list(self._commits.pending)
        write_manifest(self.storage, manifest, f"manifests/{epoch:010d}.json")
        if manifest.checkpoint is not None:
            self.store.retain(manifest)
        if manifest.checkpoint is not None or requests or final:
            self.committed.extend(self._commits.commit())
        if ran:
            self._commits.delete_orphans()
        self.store.advance(manifest)
        self.epochs += 1
        self._forget_old_epochs(epoch)
        self.output.hand_on(output)
        self._serve_requests(manifest, requests, final)

    def _add_source_positions(self, manifest: Manifest) -> None:
        """Add every source's position after ``manifest``'s epoch to it, as its operator's
        state (see the module's docstring); a socket's unprocessed lines are written beside
        the state."""
        entries, checksums = dict(manifest.operators), dict(manifest.checksums)
        for plan in self.store.source_plans():
            node_id = plan.head
            operator_id = self.operator_ids[node_id]
            position: dict[str, Any] | None
            if plan.nodes[node_id].bounded:
                position = {"finished": True}
            else:

                def save(data: bytes, operator_id: str = operator_id) -> str:
                    path = f"state/epoch-{manifest.epoch:010d}/sources/{operator_id}.json"
                    self.storage.write(path, data)
                    checksums[path] = Checksum.of(data)
                    return path

                position = self._feeds[node_id].position(self._read_up_to.get(node_id, 0), save)
                if position is None:
                    continue
            state = manifest.operators.get(operator_id) or self.store.operator_state(operator_id, plan)
            entries[operator_id] = replace(state, source={"kind": str(plan.nodes[node_id].operator.kind), **position})
        manifest.operators, manifest.checksums = entries, checksums

    def _forget_old_epochs(self, epoch: int) -> None:
        """Forget what no kept manifest needs (see ``_forget_old_manifests``): also the
        source logs' lines before every kept manifest's offsets."""
        kept = self.store.forget_old_manifests(epoch)
        for node_id, feed in self._feeds.items():
            feed.forget_before(min((manifest.offsets.get(node_id, 0) for manifest in kept), default=0))

    def _serve_requests(self, manifest: Manifest, requests: list[SavepointRequest], final: bool) -> None:
        """Copy the epoch's state to each savepoint asked for; stop the job if a stop's
        savepoint completed. A savepoint that fails leaves the job running (as in Flink;
        unless the epoch ended its input) and none of its files behind."""
        stop = False
        for request in requests:
            target: Storage | None = None
            try:
                target = self.store.open(request.path)
                request.result = copy_savepoint(self.storage, manifest, target)
                self.checkpoints.last_savepoint = request.result
            except Exception as error:
                if target is not None:
                    discard_savepoint(target, manifest)
                going_on = "" if final else f" Job {self.graph.job_name!r} goes on running."
                request.error = JobError(
                    f"Failed to take the savepoint to {request.path!r}: {type(error).__name__}: {error}.{going_on}"
                )
                request.error.__cause__ = error
            request.done.set()
            stop = stop or (request.stop and request.error is None)
        if stop:
            self._stop_query()


def _identity(value: Any) -> Any:
    return value
