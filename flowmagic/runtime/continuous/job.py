"""A running unbounded job on the driver: Spark's micro-batch loop, one epoch per batch.

:class:`ContinuousJob` starts one Structured Streaming query over the union of the job's
sources (flowmagic's own, as Python streaming data sources, and any Spark streaming
DataFrame given to ``from_spark``, plus a clock that makes an epoch run on every trigger)
with ``foreachBatch``. Each batch is one epoch: one Spark job of the bounded runtime's RDDs
whose tasks continue (or restore) their subtasks, write their state, and return what their
sinks made. Then the driver writes the epoch's manifest, which completes the epoch, and
hands on the output. An epoch whose manifest exists is never run again, so a batch Spark
replays after a restart changes nothing twice.

It is also the job's client, with Flink's ``JobClient`` methods: ``get_job_status()``,
``cancel()``, ``stop_with_savepoint(advance_to_end_of_time, savepoint_directory)``,
``trigger_savepoint(savepoint_directory)``.

A failed query (an epoch's Spark job failed after Spark's own task retries) restarts under
the job's restart strategy (:mod:`~flowmagic.vocabulary.restart_strategy`): a new
query goes on from the last completed epoch, whose batch Spark replays, until the strategy
says the job fails for good.

As Flink, a job keeps its checkpoints under ``<checkpoint dir>/<job id>``: every epoch's
manifest and state there, and each completed checkpoint as ``chk-<n>/_metadata.json``, a
manifest of the job's (shared, incremental) state files; the last
``execution.checkpointing.num-retained`` are kept, and when the job ends they are kept or
deleted as ``execution.checkpointing.externalized-checkpoint-retention`` says. A new job never
resumes another's directory: restoring a retained checkpoint, like a savepoint, is explicit
(``execution.savepoint.path``) and checked alike.

A source's position is operator state, in every checkpoint and savepoint under the source's
operator ID, so a restored job goes on where its sources were, at any parallelism (the
positions are of the whole source, split anew among the restored subtasks):

* a data generator: the index its next record has;
* a bounded source (a collection, a sequence, a bounded generator or file): finished, so
  a restored job does not read it again (Flink's finished operators stay finished);
* a monitored FileSource: the paths it saw, and the files not read to their end with the
  lines read of each (Flink's enumerator's and readers' state);
* a socket: Flink's socket source keeps nothing; flowmagic keeps the lines it had received
  but not yet processed, which a restored job processes before those of its new connection;
* a Spark streaming DataFrame (``from_spark``): nothing; Spark's own checkpoint of the job
  owns its offsets, and a restored job's source starts as its options say.
"""

from __future__ import annotations

import contextlib
import enum
import os
import posixpath
import queue
import shutil
import tempfile
import threading
import time
import uuid
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from flowmagic.errors import InvalidTypeError, JobCancelledError, JobError, JobFailedError
from flowmagic.graph.execution_graph import ExecutionGraph, ExecutionState
from flowmagic.key_groups import compute_key_group_range
from flowmagic.runtime.continuous.epoch import EPOCH_REPORT, EpochContext, EpochSubtaskFunction
from flowmagic.runtime.continuous.feeds import Feed, FeedContext, SourceReaderFailed
from flowmagic.runtime.continuous.file_commit import FileCommits
from flowmagic.runtime.continuous.restore_check import compare_restore, program_operators, read_snapshot
from flowmagic.runtime.continuous.sources import (
    SourceDescriptor,
    read_range,
    source_frame,
    split_range,
    write_admission,
)
from flowmagic.runtime.continuous.state_store import (
    MANIFEST,
    Checksum,
    Manifest,
    OperatorState,
    StateDeclaration,
    StateFile,
    copy_savepoint,
    read_manifest,
    verify_snapshot,
    write_manifest,
)
from flowmagic.runtime.continuous.storage import Storage, s3a_options
from flowmagic.runtime.failures import failure_message
from flowmagic.runtime.file_sink import sink_directories
from flowmagic.runtime.metric_reports import (
    CheckpointsReport,
    ContinuousReport,
    EventTimeReport,
    JobReport,
    SinkFilesReport,
    SubtaskUpdate,
)
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.runtime.plan import VertexPlan, build_plans, pickle_plan
from flowmagic.runtime.registry import implementation
from flowmagic.runtime.result import JobResult
from flowmagic.vocabulary.restart_strategy import RestartStrategy

__all__ = ["CheckpointStats", "CollectedRecords", "ContinuousJob", "EpochOutput", "JobStatus"]

#: The most records one epoch takes from one of flowmagic's sources (bounded memory).
MAX_RECORDS_PER_EPOCH = 500_000
#: Admission control: epochs start admitting this many records per source, twice as many
#: after an epoch shorter than ``_SHORT_EPOCH`` s, half as many after one over ``_LONG_EPOCH`` s
#: (so that a slow pipeline still answers a stop or a savepoint within seconds).
_FIRST_ADMISSION = 1_000
_SHORT_EPOCH, _LONG_EPOCH = 1.0, 2.0
#: How many of the newest printed lines a job keeps for its live view.
PRINTED_TAIL = 40
_CLOCK_SOURCE = 0
_KEPT_EPOCHS = 3


class JobStatus(enum.StrEnum):
    """Flink's ``JobStatus``, as ``JobClient.get_job_status()`` returns it."""

    INITIALIZING = "INITIALIZING"
    RUNNING = "RUNNING"
    RESTARTING = "RESTARTING"
    CANCELLING = "CANCELLING"
    CANCELED = "CANCELED"
    FINISHED = "FINISHED"
    FAILED = "FAILED"

    @property
    def is_globally_terminal(self) -> bool:
        return self in (JobStatus.CANCELED, JobStatus.FINISHED, JobStatus.FAILED)

    def __str__(self) -> str:
        return self.value


@dataclass
class CheckpointStats:
    """What Flink's web UI shows in its Checkpoints tab."""

    completed: int = 0
    last_duration_ms: float | None = None
    last_size_bytes: int | None = None
    last_completed_at: float | None = None
    last_savepoint: str | None = None


@dataclass
class EpochOutput:
    """What one epoch's sinks made, handed on once the epoch completed."""

    epoch: int
    printed: list[tuple[bool, str]] = field(default_factory=list)
    collected: dict[int, list[Any]] = field(default_factory=dict)
    #: The file sinks' committables (see :class:`FileCommits`), for the job to commit.
    committables: list[Any] = field(default_factory=list)


@dataclass
class _Request:
    path: str
    stop: bool
    #: Flink's drain (``advance_to_end_of_time``): the epoch that takes the savepoint ends
    #: the job's input first, so that event-time windows and timers fire.
    drain: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    result: str | None = None
    error: BaseException | None = None


class ContinuousJob:
    """An unbounded job running as epochs on Spark, and its client."""

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
        savepoint_directory: str | None = None,
    ):
        self.graph = graph
        self.job_id = uuid.uuid4().hex
        self.spark = spark
        self.checkpoint_interval_ms = checkpoint_interval_ms
        self.checkpoint_retention = checkpoint_retention
        self.checkpoints_retained = checkpoints_retained
        #: The temporary checkpoint directory when none was configured (gone with the job).
        self._temporary_root = None if checkpoint_storage is not None else tempfile.mkdtemp(prefix="flowmagic-job-")
        self.storage = self._storage(checkpoint_storage or self._temporary_root or "").child(self.job_id)
        #: The driver's own files (socket logs, the planner's ranges): in the checkpoint
        #: directory when it is on this machine's file system, else beside it here.
        self.local_dir = (
            self.storage.local_path if self.storage.is_local else tempfile.mkdtemp(prefix="flowmagic-job-local-")
        )
        self.on_output = on_output
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
        #: ``execution.checkpointing.savepoint-dir``: where savepoints go when none is named.
        self.savepoint_directory = savepoint_directory
        #: What the last ``cancel()`` did to stop the running epoch (None: there was none).
        self.cancel_details: str | None = None
        #: Set by ``cancel()``: wakes a restart's backoff.
        self._cancelled = threading.Event()
        self.checkpoints = CheckpointStats()
        self.epochs = 0
        self.printed_total = 0
        #: The newest printed lines, for views that show a job's output as it comes.
        self.printed_tail: deque[str] = deque(maxlen=PRINTED_TAIL)
        stream_graph = graph.job_graph.stream_graph
        self.plans = build_plans(graph)
        self.operator_ids = {node_id: digest.hex() for node_id, digest in stream_graph.operator_hashes.items()}
        #: Operator id -> the rule its keyed state is filed by (its key_by's, see KeyHash).
        self._key_hashes = {
            self.operator_ids[node_id]: node.key_hash.name
            for plan in self.plans.values()
            for node_id, node in plan.nodes.items()
            if node_id in self.operator_ids
        }
        #: Where the state to restore lies: this job's checkpoint directory, or a savepoint's
        #: (or a retained checkpoint's job directory).
        self._restore_storage = self.storage
        self._previous = self._initial_state(savepoint_path, allow_non_restored_state)
        #: Whether ``_previous`` is this job's own (an earlier epoch) rather than a savepoint's.
        self._own_previous = False
        #: Per source node id, its position in the savepoint or checkpoint restored from.
        self._restored_sources = self._source_positions_to_restore()
        #: This job's completed checkpoints it retains (``chk-<n>``), oldest first.
        self._retained: deque[Manifest] = deque()
        #: Per operator id, the keyed states its functions declared (and the snapshot's).
        self._declarations: dict[str, dict[str, StateDeclaration]] = {
            operator_id: dict(self._previous.operators[operator_id].states)
            for operator_id in self.operator_ids.values()
            if self._previous is not None and operator_id in self._previous.operators
        }
        #: File sinks' committables until a checkpoint commits them (a restored job's first).
        self._commits = FileCommits(
            sink_directories(stream_graph.nodes.values()), self._previous.pending if self._previous else ()
        )
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
        self._requests: list[_Request] = []
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._query: Any = None
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
        #: Per (vertex id, subtask): busy and back-pressured time, in ms per second of the
        #: last epoch that ran (Flink's busyTimeMsPerSecond, backPressuredTimeMsPerSecond).
        self.load: dict[tuple[str, int], tuple[float, float]] = {}
        self._last_run_end = time.time()
        #: How many records an epoch admits from each flowmagic source (see ``_admit``).
        self._admission = _FIRST_ADMISSION
        #: The earliest processing-time timer of the job's subtasks after the last epoch.
        self._wakeup: int | None = None
        #: Per flowmagic source, where the planner records its batches' ranges, and its parallelism.
        self._ranges_dirs: dict[int, tuple[str, int]] = {}

    # -- state to start from ------------------------------------------------------------------

    def _storage(self, location: str) -> Storage:
        """``location``'s storage, with the S3A settings of the job's Spark session."""
        storage = Storage(location)
        if storage.is_local:
            return storage
        from flowmagic.runtime.spark.session import get_spark_session

        # The session's settings (spark.hadoop.* set in the builder or at run time).
        return Storage(location, s3a_options(get_spark_session(self.spark).conf.getAll))

    def _manifests(self) -> list[str]:
        return [name for name in self.storage.list("manifests") if name.endswith(".json")]

    def _initial_state(self, savepoint_path: str | None, allow_non_restored: bool) -> Manifest | None:
        """The savepoint or retained checkpoint to restore from (None: the job starts afresh;
        it never resumes another job's checkpoints unless told to, as in Flink)."""
        if savepoint_path is None:
            return None
        manifest, savepoint = read_snapshot(savepoint_path, self._storage)
        # Every operator's verdict before anything runs: a refusal lists them all.
        program = program_operators(self.graph, self.plans)
        compare_restore(manifest, program, savepoint_path, self.graph.job_name, allow_non_restored).raise_if_refused()
        # Every file, before any task unpickles one: a damaged savepoint is one error now.
        verify_snapshot(savepoint, manifest, self._describe_operator)
        self._restore_storage = savepoint
        return manifest

    def _describe_operator(self, operator_id: str) -> str:
        """An operator of a snapshot, by its name in this program and its ID."""
        nodes = self.graph.job_graph.stream_graph.nodes
        names = {hex_id: nodes[node_id].name for node_id, hex_id in self.operator_ids.items()}
        return f"{names[operator_id]!r} ({operator_id})" if operator_id in names else operator_id

    def _source_positions_to_restore(self) -> dict[int, dict[str, Any]]:
        """Per source of this program, the position the snapshot restored from keeps under
        its operator ID (a source it does not know starts afresh)."""
        if self._previous is None:
            return {}
        positions = {}
        for plan in self._source_plans():
            state = self._previous.operators.get(self.operator_ids.get(plan.head, ""))
            if state is None or state.source is None:
                continue
            kind = str(plan.nodes[plan.head].operator.kind)
            if state.source.get("kind") != kind:
                raise JobError(
                    f"Cannot restore the source {plan.name!r} (operator {self.operator_ids[plan.head]}): the "
                    f"savepoint holds the position of a source of another kind ({state.source.get('kind')!r}, "
                    f"not {kind!r})."
                )
            positions[plan.head] = state.source
        return positions

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> ContinuousJob:
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
        ship_flowmagic(session.sparkContext, arrow=True)
        self.monitor.executor_lookup = executor_lookup(session.sparkContext)
        frames = [source_frame(session, SourceDescriptor("clock", _CLOCK_SOURCE, 1))]
        for plan in self._source_plans():
            node = plan.nodes[plan.head]
            if node.bounded:
                continue
            node_id = plan.head
            context = FeedContext(
                node_id,
                plan.name,
                plan.parallelism,
                directory=os.path.join(self.local_dir, "sources", str(node_id)),
                ranges_dir=os.path.join(self.local_dir, "sources", "ranges", str(node_id)),
                max_per_epoch=MAX_RECORDS_PER_EPOCH,
                restored=self._restored_sources.get(node_id),
                read_restored=self._restore_storage.read,
            )
            feed = self._feeds[node_id] = node.implementation.open_feed(node.operator.params, context)
            if feed.ranges_dir is not None:
                self._ranges_dirs[node_id] = (feed.ranges_dir, plan.parallelism)
                self._read_up_to[node_id] = feed.start_offset
            frames.append(feed.frame(session))
        for ranges_dir, _parallelism in self._ranges_dirs.values():
            write_admission(ranges_dir, self._admission)
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

    def _start_query(self) -> None:
        """Start the Structured Streaming query; one over the same Spark checkpoint goes on
        from the last batch Spark committed, and replays the batch that did not complete."""
        writer = (
            self._union.writeStream.foreachBatch(self._run_epoch)
            .option("checkpointLocation", self.storage.child("spark").location)
            .queryName(f"flowmagic-{self.graph.job_name}-{self.job_id[:8]}")
        )
        self._query = writer.start()

    def _source_plans(self) -> list[VertexPlan]:
        return [plan for plan in self.plans.values() if plan.nodes[plan.head].is_source]

    def _watch(self) -> None:
        """Wait for the query's end; restart a failed one as the restart strategy allows,
        and settle the job's status."""
        while True:
            try:
                self._query.awaitTermination()
            except Exception as error:
                if self.status is JobStatus.CANCELLING:
                    break  # the cancel interrupted the running epoch: no failure of the job
                if self._restart_after(error):
                    continue
            break
        self._end()

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
        self._discard_checkpoints()
        self._finished.set()
        if self._temporary_root and not self._retained:
            shutil.rmtree(self._temporary_root, ignore_errors=True)

    def _discard_checkpoints(self) -> None:
        """Flink's ends of a job's checkpoints: deleted when it finishes, kept when it is
        cancelled only with RETAIN_ON_CANCELLATION, kept when it fails unless they are not
        externalized. With none kept, nothing in the job's directory is of use any more: it goes."""
        retention = self.checkpoint_retention
        kept = (self.status is JobStatus.CANCELED and retention == "RETAIN_ON_CANCELLATION") or (
            self.status is JobStatus.FAILED and retention != "NO_EXTERNALIZED_CHECKPOINTS"
        )
        if not (self._retained and kept):
            self._retained.clear()
            self.storage.remove_dir()

    # -- one epoch ----------------------------------------------------------------------------

    def _epoch_time(self, epoch: int) -> int:
        """The epoch's processing time: logged before it first runs, so a replay reads the same."""
        path = f"epochs/{epoch}"
        if self.storage.exists(path):
            return int(self.storage.read(path))
        now = int(time.time() * 1000)
        self.storage.write(path, str(now).encode())
        return now

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

    def _epoch(self, batch: Any, epoch: int) -> None:
        previous = self._previous
        own = previous if self._own_previous else None
        if own is not None and epoch <= own.epoch:
            return  # completed before: its manifest is written and its output was handed on
        began = time.time()
        now = self._epoch_time(epoch)
        start_time = own.time if own is not None else now
        for node_id, feed in self._feeds.items():
            feed.check(self._read_up_to.get(node_id, 0))
        session = batch.sparkSession
        sc = session.sparkContext
        ranges = self._epoch_ranges()
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
            restore_storage=self._restore_storage if previous is not None else None,
            restore_operators=dict(previous.operators) if previous is not None else {},
            restore_progress=own.progress if own is not None else None,
            restore_checksums=previous.checksums if previous is not None else {},
            # Bounded sources are read in the job's first epoch, unless they finished before
            # the snapshot it was restored from.
            read_bounded=frozenset(
                plan.id
                for plan in self._source_plans()
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
            subtask_function=lambda plan: EpochSubtaskFunction(plan, self._payloads[plan.id], context),
            source_input=source_input,
            every_vertex_reports=True,
        ).collect()
        self._complete(epoch, now, began, items, final, checkpoint)
        if final:
            # Every source ended (or a drain ended them), and this epoch ended the job's input:
            # the job is FINISHED.
            self._stop_query()

    def _epoch_ranges(self) -> dict[int, list[list[tuple[int, int]]]]:
        """Per flowmagic source, each subtask's offset ranges of this epoch.

        The planner recorded them when Spark planned the batch, so no Spark job reads them.
        Spark plans no partitions of a source whose offsets did not move (it reads nothing
        from it): then there is no record of the batch, and the source has no input.
        """
        ranges: dict[int, list[list[tuple[int, int]]]] = {}
        for node_id, (ranges_dir, parallelism) in self._ranges_dirs.items():
            start = self._read_up_to.get(node_id, 0)
            end = read_range(ranges_dir, start)
            ranges[node_id] = split_range(start, start if end is None else end, parallelism)
            self._read_up_to[node_id] = start if end is None else end
        return ranges

    def _idle(self, ranges: dict[int, list[list[tuple[int, int]]]], now: int, final: bool, checkpoint: bool) -> bool:
        """Whether the epoch has nothing to do, so that no Spark job runs for it: no input
        came, no timer is due, the job's input does not end (a Spark stream's batch is not
        known to be empty without a job reading it), and no checkpoint is due while file
        sinks keep part files open (their rolling policy may roll them at checkpoints)."""
        if self.epochs == 0 or final or not self._own_previous:
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
        self, epoch: int, now: int, began: float, items: list[tuple[Any, Any]], final: bool, checkpoint: bool
    ) -> None:
        manifest = Manifest(epoch=epoch, time=now, offsets=dict(self._read_up_to))
        # The checksums of this epoch's files, and of earlier files its changes follow.
        checksums = dict(self._previous.checksums) if self._previous is not None and self._own_previous else {}
        output = EpochOutput(epoch)
        self._commits.begin_epoch()
        nodes = self.graph.job_graph.stream_graph.nodes
        wakeups = []
        for key, payload in items:
            if key[0] == EPOCH_REPORT:
                _tag, vertex_id, index = key
                plan = self.plans[vertex_id]
                for operator_id, declared in payload["declarations"].items():
                    self._declarations.setdefault(operator_id, {}).update(
                        (name, StateDeclaration(kind, type_info)) for name, (kind, type_info) in declared.items()
                    )
                for operator_id, (state_file, delta) in payload["state"].items():
                    files = self._chain(operator_id, plan, index) if delta else []
                    if state_file is not None:
                        files.append(state_file)
                    if files:
                        state = manifest.operators.setdefault(operator_id, self._operator_state(operator_id, plan))
                        state.files.extend(files)
                for operator_id, path in payload["operator_state"].items():
                    state = manifest.operators.setdefault(operator_id, self._operator_state(operator_id, plan))
                    state.operator_state.extend([None] * (plan.parallelism - len(state.operator_state)))
                    state.operator_state[index] = path
                progress = manifest.progress.setdefault(vertex_id, [None] * plan.parallelism)
                progress[index] = payload["progress"]
                checksums.update(payload["checksums"])
                if payload["wakeup"] is not None:
                    wakeups.append(payload["wakeup"])
                period = max(time.time() - self._last_run_end, 1e-3)
                self.load[(vertex_id, index)] = (
                    min(payload["busy_ms"] / period, 1000.0),
                    min(payload["backpressured_ms"] / period, 1000.0),
                )
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
                continue
            node_id, _subtask = key
            operator = nodes[node_id].operator
            if operator is not None:
                implementation(operator.kind).deliver_epoch(output, node_id, payload)
        for committable in output.committables:
            self._commits.take(committable)
        manifest.checksums = {path: checksums[path] for path in manifest.files()}
        for operator_id, state in manifest.operators.items():
            state.states = dict(self._declarations.get(operator_id, {}))
        self._wakeup = min(wakeups, default=None)
        self._last_run_end = time.time()
        self._admit(self._last_run_end - began)
        self._finish_epoch(manifest, began, output, checkpoint=checkpoint, final=final, ran=True)

    def _admit(self, took: float) -> None:
        """Adapt how many records the next epochs admit to how long this one took."""
        admission = self._admission
        if took < _SHORT_EPOCH:
            admission = min(admission * 2, MAX_RECORDS_PER_EPOCH)
        elif took > _LONG_EPOCH:
            admission = max(admission // 2, _FIRST_ADMISSION)
        if admission != self._admission:
            self._admission = admission
            for ranges_dir, _parallelism in self._ranges_dirs.values():
                write_admission(ranges_dir, admission)

    def _operator_state(self, operator_id: str, plan: VertexPlan) -> OperatorState:
        """An operator's entry in the manifest of the epoch its subtasks just wrote."""
        return OperatorState(plan.parallelism, plan.max_parallelism, key_hash=self._key_hashes[operator_id])

    def _chain(self, operator_id: str, plan: VertexPlan, index: int) -> list[StateFile]:
        """The files of the last epoch's state of ``operator_id`` at subtask ``index``,
        which the subtask's changes of this epoch follow."""
        previous = self._previous
        if previous is None or not self._own_previous or operator_id not in previous.operators:
            return []
        key_groups = compute_key_group_range(plan.max_parallelism, plan.parallelism, index)
        first, last = key_groups.start, key_groups.stop - 1
        return [file for file in previous.operators[operator_id].files if (file.first, file.last) == (first, last)]

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
            # A drain is served by an epoch that ended the input (one that began before it
            # was asked for did not).
            requests = [request for request in self._requests if final or not request.drain]
            self._requests = [request for request in self._requests if request not in requests]
        if checkpoint or requests or final:
            # A snapshot that may be restored from keeps where its sources were.
            self._add_source_positions(manifest)
        if checkpoint and self.checkpoint_interval_ms is not None:
            self.checkpoints.completed += 1
            manifest.checkpoint = self.checkpoints.completed
            self.checkpoints.last_duration_ms = (time.time() - began) * 1000
            self.checkpoints.last_size_bytes = sum(self.storage.size(path) for path in manifest.files())
            self.checkpoints.last_completed_at = time.time()
            self._last_checkpoint_time = time.time()
        epoch = manifest.epoch
        manifest.pending = list(self._commits.pending)
        write_manifest(self.storage, manifest, f"manifests/{epoch:010d}.json")
        if manifest.checkpoint is not None:
            self._retain(manifest)
        if manifest.checkpoint is not None or requests or final:
            self.committed.extend(self._commits.commit())
        if ran:
            self._commits.delete_orphans()
        previous_offsets = self._previous.offsets if self._previous is not None and self._own_previous else {}
        self._previous = manifest
        self._own_previous = True
        self._restore_storage = self.storage
        self.epochs += 1
        self.printed_total += len(output.printed)
        self.printed_tail.extend(line for _to_stderr, line in output.printed)
        self._forget_old_epochs(epoch, previous_offsets)
        if self.on_output is not None and (output.printed or output.collected):
            self.on_output(output)
        self._serve_requests(manifest, requests, final)

    def _add_source_positions(self, manifest: Manifest) -> None:
        """Add every source's position after ``manifest``'s epoch to it, as its operator's
        state (see the module's docstring); a socket's unprocessed lines are written beside
        the state."""
        entries, checksums = dict(manifest.operators), dict(manifest.checksums)
        for plan in self._source_plans():
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
            state = manifest.operators.get(operator_id) or self._operator_state(operator_id, plan)
            entries[operator_id] = replace(state, source={"kind": str(plan.nodes[node_id].operator.kind), **position})
        manifest.operators, manifest.checksums = entries, checksums

    def _retain(self, manifest: Manifest) -> None:
        """Keep the completed checkpoint ``manifest`` as ``chk-<n>``, a manifest of the job's
        state files (not copies: a checkpoint costs one small file), and drop the oldest
        beyond ``execution.checkpointing.num-retained``."""
        write_manifest(self.storage, replace(manifest, root=".."), f"chk-{manifest.checkpoint}/{MANIFEST}")
        self._retained.append(manifest)
        while len(self._retained) > self.checkpoints_retained:
            self.storage.remove_dir(f"chk-{self._retained.popleft().checkpoint}")

    def _forget_old_epochs(self, epoch: int, consumed: dict[int, int]) -> None:
        """Delete the manifests of all but the newest epochs, and the state no kept
        manifest needs (a kept one may need state an older epoch wrote), the source logs'
        lines before every kept manifest's offsets, the ranges of batches now completed and
        the logged times of epochs now completed (a replay of them never runs)."""
        kept = []
        for name in self._manifests():
            if int(name[:-5]) <= epoch - _KEPT_EPOCHS:
                self.storage.remove(f"manifests/{name}")
            else:
                kept.append(read_manifest(self.storage, f"manifests/{name}"))
        needed = {path.split("/")[1] for manifest in kept for path in manifest.files()}
        needed.update(path.split("/")[1] for manifest in self._retained for path in manifest.files())
        for folder in self.storage.list("state"):
            if folder.startswith("epoch-") and folder not in needed and int(folder.rsplit("-", 1)[1]) <= epoch:
                self.storage.remove_dir(f"state/{folder}")
        for node_id, feed in self._feeds.items():
            feed.forget_before(min((manifest.offsets.get(node_id, 0) for manifest in kept), default=0))
        for node_id, (ranges_dir, _parallelism) in self._ranges_dirs.items():
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(ranges_dir, f"{consumed.get(node_id, 0)}.json"))
        self._forget_epoch_time(epoch)

    def _forget_epoch_time(self, epoch: int) -> None:
        """Delete the logged time of ``epoch``, whose manifest is written: Spark replays at
        most its last batch, and a batch whose manifest exists returns before it reads the
        time (each job has a directory of its own, so no other run left times there)."""
        self.storage.remove(f"epochs/{epoch}")

    def _serve_requests(self, manifest: Manifest, requests: list[_Request], final: bool) -> None:
        """Copy the epoch's state to each savepoint asked for; stop the job if a stop's
        savepoint completed. A savepoint that fails leaves the job running (as in Flink;
        unless the epoch ended its input) and none of its files behind."""
        stop = False
        for request in requests:
            target: Storage | None = None
            try:
                target = self._storage(request.path)
                request.result = copy_savepoint(self.storage, manifest, target)
                self.checkpoints.last_savepoint = request.result
            except Exception as error:
                if target is not None:
                    _discard_savepoint(target, manifest)
                going_on = "" if final else f" Job {self.graph.job_name!r} goes on running."
                request.error = JobError(
                    f"Failed to take the savepoint to {request.path!r}: {type(error).__name__}: {error}.{going_on}"
                )
                request.error.__cause__ = error
            request.done.set()
            stop = stop or (request.stop and request.error is None)
        if stop:
            self._stop_query()

    # -- the client ---------------------------------------------------------------------------

    def snapshot(self) -> JobReport:
        """The monitor's snapshot, with what a continuous job adds: its status, epochs,
        restarts, checkpoints and the newest printed lines (the total counted)."""
        snapshot = self.monitor.snapshot()
        checkpoints = self.checkpoints
        continuous = ContinuousReport(
            status=str(self.status),
            epochs=self.epochs,
            restarts=self.restarts,
            restart_strategy=self.restart_strategy.type,
            last_failure=self.last_failure,
            checkpoints=CheckpointsReport(
                completed=checkpoints.completed,
                last_duration_ms=checkpoints.last_duration_ms,
                last_size_bytes=checkpoints.last_size_bytes,
                last_completed_at=checkpoints.last_completed_at,
                last_savepoint=checkpoints.last_savepoint,
            ),
            load={
                vertex.id: [self.load.get((vertex.id, index)) for index in range(len(vertex.subtasks))]
                for vertex in snapshot.vertices
            },
            files=(
                SinkFilesReport(committed=len(self.committed), pending=len(self._commits.pending))
                if self._commits.directories
                else None
            ),
            printed_total=self.printed_total,
            printed_tail=list(self.printed_tail),
            error=str(self.error) if self.error is not None else None,
        )
        state = str(self.status) if self.status is JobStatus.RESTARTING else snapshot.state
        return replace(snapshot, state=state, continuous=continuous)

    def get_job_id(self) -> str:
        return self.job_id

    def get_job_status(self) -> JobStatus:
        return self.status

    def cancel(self, timeout: float = 15) -> None:
        """Cancel the job: no epoch runs after the running one, and the job ends CANCELED.

        Returns within ``timeout`` s whatever user code does: the running epoch's Spark job
        is cancelled (its tasks interrupted, as Flink interrupts a task's thread; Spark kills
        a Python worker still busy ``spark.python.task.killTimeout`` later, as Flink kills a
        task after ``task.cancellation.timeout``), and ``cancel_details`` says so. Raises a
        :class:`JobError` naming what did not stop if the job has not ended by then.
        """
        with self._lock:
            if self.status.is_globally_terminal:
                return
            self.status = JobStatus.CANCELLING
            self._cancelled.set()
        self.monitor.state = ExecutionState.CANCELING
        deadline = time.monotonic() + timeout
        if self._query is not None:
            self._interrupt_epoch(deadline)
            self._stop_query()
        if not self._finished.wait(max(deadline - time.monotonic(), 0.0)):
            raise JobError(
                f"Job {self.graph.job_name!r} is still {self.status} {timeout} s after its cancel: "
                f"{self.cancel_details or 'its Spark query did not stop'}."
            )

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

    def _savepoint(
        self, directory: str | os.PathLike[str] | None, stop: bool, drain: bool, timeout: float | None
    ) -> str:
        if directory is None:
            if self.savepoint_directory is None:
                # Flink's error when neither the call nor the configuration names a directory.
                raise JobError(
                    "No savepoint directory configured. You can either specify a directory when triggering this "
                    "savepoint or configure a cluster-wide default via key 'execution.checkpointing.savepoint-dir'."
                )
            # Flink's own name of a savepoint in the default directory.
            path = posixpath.join(
                self.savepoint_directory.rstrip("/"), f"savepoint-{self.job_id[:6]}-{uuid.uuid4().hex[:12]}"
            )
        elif isinstance(directory, (str, os.PathLike)):
            path = os.fspath(directory)
        else:
            raise InvalidTypeError(f"savepoint_directory must be a path, got {directory!r}")
        if self.status is not JobStatus.RUNNING:
            raise JobError(f"Job {self.graph.job_name!r} is {self.status}: no savepoint can be taken.")
        request = _Request(path, stop, drain)
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
        if stop:
            self._finished.wait(60)
        return request.result

    def trigger_savepoint(
        self, savepoint_directory: str | os.PathLike[str] | None = None, timeout: float | None = 120
    ) -> str:
        """PyFlink's ``JobClient.trigger_savepoint``: a savepoint of the next completed epoch
        in ``savepoint_directory`` (else a new directory under
        ``execution.checkpointing.savepoint-dir``); the job goes on. Returns its path (PyFlink
        returns a future of it). A savepoint that fails raises and leaves the job running."""
        return self._savepoint(savepoint_directory, False, False, timeout)

    def stop_with_savepoint(
        self,
        advance_to_end_of_time: bool | str | os.PathLike[str] = False,
        savepoint_directory: str | os.PathLike[str] | None = None,
        timeout: float | None = 120,
    ) -> str:
        """PyFlink's ``JobClient.stop_with_savepoint``: a savepoint of the next completed
        epoch (where :meth:`trigger_savepoint` puts it), then the job ends (FINISHED).

        ``advance_to_end_of_time`` is Flink's drain: that epoch first ends the job's input
        (MAX_WATERMARK, so every event-time window and timer fires) and the savepoint holds
        the state after it. ``stop_with_savepoint(path)`` (a path first) is flowmagic's
        older form. A savepoint that fails raises and leaves the job running.
        """
        if isinstance(advance_to_end_of_time, (str, os.PathLike)):
            if savepoint_directory is not None:
                raise InvalidTypeError(
                    f"stop_with_savepoint(advance_to_end_of_time, savepoint_directory): advance_to_end_of_time must "
                    f"be a bool, got {advance_to_end_of_time!r}"
                )
            return self._savepoint(advance_to_end_of_time, True, False, timeout)
        if not isinstance(advance_to_end_of_time, bool):
            raise InvalidTypeError(f"advance_to_end_of_time must be a bool, got {advance_to_end_of_time!r}")
        return self._savepoint(savepoint_directory, True, advance_to_end_of_time, timeout)

    def wait(self, timeout: float | None = None) -> JobStatus:
        """Wait until the job ended (or ``timeout`` s); raise its failure if it failed."""
        self._finished.wait(timeout)
        if self.status is JobStatus.FAILED and self.error is not None:
            raise self.error
        return self.status

    def result(self) -> JobResult:
        """The job's end as a :class:`JobResult` (metrics of its subtasks)."""
        self.wait()
        result = JobResult(
            job_name=self.graph.job_name,
            job_type=self.graph.job_type,
            state=str(self.monitor.state),
            duration=(self.monitor.end_time or time.time()) - (self.monitor.start_time or time.time()),
            job_id=self.job_id,
        )
        result.metrics = self.monitor.snapshot()
        result.committed = list(self.committed)
        return result

    def __repr__(self) -> str:
        return (
            f"<ContinuousJob {self.graph.job_name!r} {self.status}: {self.epochs} epochs, "
            f"{self.checkpoints.completed} checkpoints, {self.restarts} restarts>"
        )


def _identity(value: Any) -> Any:
    return value


def _discard_savepoint(target: Storage, manifest: Manifest) -> None:
    """Delete the files a failed savepoint copied (its manifest, written last, was not)."""
    for path in manifest.files():
        with contextlib.suppress(OSError):
            target.remove(path)


class CollectedRecords:
    """``execute_and_collect()`` of an unbounded job: its records as they arrive, until the
    job ends; ``close()`` (or leaving a ``with`` block) cancels it."""

    def __init__(self, node_id: int):
        self._node_id = node_id
        self._queue: queue.Queue[list[Any]] = queue.Queue()
        self._pending: list[Any] = []
        self._job: ContinuousJob | None = None

    def attach(self, job: ContinuousJob) -> None:
        self._job = job

    def take(self, output: EpochOutput) -> None:
        """The job's ``on_output``: keep the collect sink's records of an epoch."""
        records = output.collected.get(self._node_id)
        if records:
            self._queue.put(records)

    def limited(self, limit: int) -> Iterator[Any]:
        """The first ``limit`` records; the job is cancelled after the last of them."""
        try:
            for position, record in enumerate(self, 1):
                yield record
                if position >= limit:
                    return
        finally:
            self.close()

    def __iter__(self) -> CollectedRecords:
        return self

    def __next__(self) -> Any:
        job = self._job
        assert job is not None, "attach() the job first"
        try:
            while not self._pending:
                if job.status.is_globally_terminal and self._queue.empty():
                    if job.status is JobStatus.FAILED and job.error is not None:
                        raise job.error
                    raise StopIteration
                try:
                    self._pending = self._queue.get(timeout=0.2)
                except queue.Empty:
                    continue
        except KeyboardInterrupt:
            job.cancel()
            raise JobCancelledError(f"Job {job.graph.job_name!r} was cancelled.") from None
        return self._pending.pop(0)

    def close(self) -> None:
        if self._job is not None:
            self._job.cancel()

    def __enter__(self) -> CollectedRecords:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
