"""The client of a running unbounded job, with Flink's ``JobClient`` methods.

:class:`ContinuousJob` is an :class:`~flowmagic.runtime.continuous.coordinator.EpochCoordinator`
(the job's epochs on Spark) that a program and the notebook talk to: ``get_job_status()``,
``cancel()``, ``stop_with_savepoint(advance_to_end_of_time, savepoint_directory)``,
``trigger_savepoint(savepoint_directory)``, ``wait()``, ``result()``, and ``snapshot()`` for
the live view.
"""

from __future__ import annotations

import os
import posixpath
import time
import uuid
from collections import deque
from dataclasses import replace

from flowmagic.errors import InvalidTypeError, JobError
from flowmagic.graph.execution_graph import ExecutionState
from flowmagic.runtime.backpressure import SubtaskLoad, since_measured
from flowmagic.runtime.continuous.checkpoints import CheckpointStats
from flowmagic.runtime.continuous.coordinator import EpochCoordinator, SavepointRequest
from flowmagic.runtime.continuous.output import CollectedRecords, EpochOutput
from flowmagic.runtime.continuous.status import JobStatus
from flowmagic.runtime.metric_reports import CheckpointsReport, ContinuousReport, JobReport, SinkFilesReport
from flowmagic.runtime.result import JobResult

__all__ = ["CheckpointStats", "CollectedRecords", "ContinuousJob", "EpochOutput", "JobStatus"]


class ContinuousJob(EpochCoordinator):
    """An unbounded job running as epochs on Spark, and its client."""

    @property
    def printed_total(self) -> int:
        """How many lines the job's print sinks printed."""
        return self.output.printed_total

    @property
    def printed_tail(self) -> deque[str]:
        """The newest printed lines, for views that show a job's output as it comes."""
        return self.output.printed_tail

    def snapshot(self) -> JobReport:
        """The monitor's snapshot, with what a continuous job adds: its status, epochs,
        restarts, checkpoints and the newest printed lines (the total counted)."""
        snapshot = self.monitor.snapshot()
        checkpoints = self.checkpoints
        # A running job's load fades while no epoch runs; an ended job keeps its last epoch's.
        now = time.time() if self.status is JobStatus.RUNNING else self.load_span[1]
        start, end = self.load_span
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
                history=list(checkpoints.history),
            ),
            load={
                vertex.id: [
                    _figures(self.load.get((vertex.id, index)), start, end, now)
                    for index in range(len(vertex.subtasks))
                ]
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
            state=[
                entry
                for vertex in snapshot.vertices
                for index in range(len(vertex.subtasks))
                for entry in self.state_sizes.get((vertex.id, index), ())
            ],
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
        request = SavepointRequest(path, stop, drain)
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


def _figures(load: SubtaskLoad | None, start: float, end: float, now: float) -> tuple[float, float] | None:
    if load is None:
        return None
    shown = since_measured(load, start, end, now)
    return shown.busy, shown.backpressured
