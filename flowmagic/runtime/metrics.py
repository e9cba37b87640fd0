r"""The driver's live view of a running job: per subtask its state and counters.

Subtasks report :class:`~flowmagic.runtime.metric_reports.SubtaskUpdate`\ s (in process, or
over :mod:`flowmagic.runtime.metrics_channel` from Spark executors); views read
:meth:`JobMonitor.snapshot`, a :class:`~flowmagic.runtime.metric_reports.JobReport`.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flowmagic.graph.execution_graph import ExecutionState
from flowmagic.runtime.metric_reports import EventTimeReport, JobReport, SubtaskReport, SubtaskUpdate, VertexReport

__all__ = ["JobMonitor", "SubtaskStatus", "process_name"]

STATES = frozenset(ExecutionState)
TERMINAL = frozenset(state for state in ExecutionState if state.is_terminal)


@dataclass
class SubtaskStatus:
    """What the web UI shows for one ExecutionVertex (its latest attempt)."""

    vertex_id: str
    index: int
    name: str
    state: str = "CREATED"
    attempt: int = 0
    host: str = ""
    start_time: float | None = None
    end_time: float | None = None
    records_in: int = 0
    records_out: int = 0
    watermark: int | None = None
    #: The user metrics of the subtask's operators (``get_metrics_group()``), by identifier.
    metrics: dict[str, Any] = field(default_factory=dict)
    #: Whether any report of this subtask reached the driver (else its counters are unknown).
    reported: bool = False
    #: The Spark stage and task (Spark's task id) its latest attempt ran as, when on Spark.
    stage: int | None = None
    task: int | None = None
    #: The id of the Spark executor that ran that task, from Spark's status store.
    executor: str | None = None
    #: Records this subtask handed each consumer subtask, by ``"<vertex id>/<subtask>"``.
    channels: dict[str, int] = field(default_factory=dict)
    #: Its input channels' watermarks and earliest pending window, as last reported.
    event_time: EventTimeReport | None = None

    @property
    def duration(self) -> float | None:
        if self.start_time is None:
            return None
        return (self.end_time or time.time()) - self.start_time

    def report(self) -> SubtaskReport:
        return SubtaskReport(
            vertex=self.vertex_id,
            subtask=self.index,
            name=self.name,
            state=self.state,
            attempt=self.attempt,
            host=self.host,
            start_time=self.start_time,
            duration=self.duration,
            records_in=self.records_in,
            records_out=self.records_out,
            watermark=self.watermark,
            metrics=dict(self.metrics),
            reported=self.reported,
            stage=self.stage,
            task=self.task,
            executor=self.executor,
            channels=dict(self.channels),
            event_time=self.event_time,
        )


@dataclass
class JobMonitor:
    """The driver's view of a running job, updated by the metrics server."""

    job_name: str
    vertices: dict[str, list[SubtaskStatus]] = field(default_factory=dict)
    vertex_names: dict[str, str] = field(default_factory=dict)
    state: str = "CREATED"
    start_time: float | None = None
    end_time: float | None = None
    failures: list[dict[str, Any]] = field(default_factory=list)
    #: Where executors report to (``host:port``); None when the live metrics are off.
    metrics_address: str | None = None
    #: On Spark: the executor ids of Spark tasks, given a stage and the task ids asked about
    #: (called by :meth:`snapshot`, outside the lock, for tasks whose executor is not known yet).
    executor_lookup: Callable[[int, set[int]], dict[int, str]] | None = field(default=None, repr=False)
    #: When the last report arrived (seconds since the epoch; 0 before the first).
    last_report: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add_vertex(self, vertex_id: str, name: str, parallelism: int) -> None:
        self.vertex_names[vertex_id] = name
        self.vertices[vertex_id] = [
            SubtaskStatus(vertex_id, i, f"{name} ({i + 1}/{parallelism})") for i in range(parallelism)
        ]

    def mark(self, state: str, only_non_terminal: bool = True) -> None:
        with self.lock:
            for subtasks in self.vertices.values():
                for subtask in subtasks:
                    if not only_non_terminal or subtask.state not in TERMINAL:
                        subtask.state = state
                        if state in TERMINAL and subtask.start_time is not None and subtask.end_time is None:
                            subtask.end_time = time.time()

    def update(self, report: SubtaskUpdate) -> None:
        """Apply one subtask's report."""
        with self.lock:
            subtasks = self.vertices.get(report.vertex)
            index = report.subtask
            if subtasks is None or not 0 <= index < len(subtasks):
                return
            subtask = subtasks[index]
            subtask.reported = True
            self.last_report = time.time()
            attempt = report.attempt
            if attempt < subtask.attempt:
                return
            if attempt > subtask.attempt or subtask.state in ("CREATED", "SCHEDULED"):
                subtask.attempt = attempt
                subtask.start_time = report.start if report.start is not None else time.time()
                subtask.end_time = None
            state = report.state if report.state is not None else subtask.state
            if state in STATES and not (
                subtask.state in TERMINAL and state not in TERMINAL and attempt == subtask.attempt
            ):
                subtask.state = state
            if report.host is not None:
                subtask.host = report.host
            if report.task is not None and report.task != subtask.task:
                subtask.task = report.task
                subtask.stage = report.stage
                subtask.executor = None
            if report.records_in is not None:
                subtask.records_in = report.records_in
            if report.records_out is not None:
                subtask.records_out = report.records_out
            if report.watermark is not None:
                subtask.watermark = report.watermark
            if report.metrics is not None:
                subtask.metrics = report.metrics
            if report.event_time is not None:
                subtask.event_time = report.event_time
            _apply_channels(subtask, report)
            if state in TERMINAL:
                subtask.end_time = report.end if report.end is not None else time.time()
            if report.failure is not None:
                self.failures.append(report.failure)

    def wait_for_reports(self, quiet: float, timeout: float) -> None:
        """After a successful job, wait until every subtask's last attempt reported FINISHED:
        its last reports may still be on their way, behind a reporter thread that connected
        late on a busy executor. Gives up once no report came for ``quiet`` s (an executor that
        cannot reach the driver sends none) or after ``timeout`` s in all."""
        started = time.time()
        deadline = started + timeout
        while (now := time.time()) < deadline:
            with self.lock:
                if all(s.state == ExecutionState.FINISHED for ts in self.vertices.values() for s in ts):
                    return
                if now - max(self.last_report, started) > quiet:
                    return
            time.sleep(0.02)

    def _resolve_executors(self) -> None:
        """Ask Spark which executor ran the tasks reported since the last snapshot."""
        if self.executor_lookup is None:
            return
        asked: dict[int, set[int]] = {}
        with self.lock:
            for subtasks in self.vertices.values():
                for subtask in subtasks:
                    if subtask.executor is None and subtask.stage is not None and subtask.task is not None:
                        asked.setdefault(subtask.stage, set()).add(subtask.task)
        if not asked:
            return
        found: dict[int, str] = {}
        for stage, tasks in asked.items():
            try:
                found.update(self.executor_lookup(stage, tasks))
            except Exception:
                # Placement is shown when Spark knows it; a status store that cannot answer
                # (a stopped session) leaves the executor unknown.
                continue
        with self.lock:
            for subtasks in self.vertices.values():
                for subtask in subtasks:
                    if subtask.executor is None and subtask.task in found:
                        subtask.executor = found[subtask.task]

    def snapshot(self) -> JobReport:
        """The job's progress now: per vertex its subtasks and totals."""
        self._resolve_executors()
        with self.lock:
            vertices = [
                VertexReport(
                    id=vertex_id,
                    name=self.vertex_names[vertex_id],
                    state=_vertex_state([s.state for s in subtasks]),
                    records_in=sum(s.records_in for s in subtasks),
                    records_out=sum(s.records_out for s in subtasks),
                    subtasks=[s.report() for s in subtasks],
                )
                for vertex_id, subtasks in self.vertices.items()
            ]
            finished = sum(1 for s in (t for ts in self.vertices.values() for t in ts) if s.state == "FINISHED")
            total = sum(len(ts) for ts in self.vertices.values())
            reported = sum(1 for ts in self.vertices.values() for s in ts if s.reported)
            elapsed = None if self.start_time is None else (self.end_time or time.time()) - self.start_time
            return JobReport(
                job=self.job_name,
                state=self.state,
                elapsed=elapsed,
                finished_subtasks=finished,
                total_subtasks=total,
                metrics_address=self.metrics_address,
                reported_subtasks=reported,
                vertices=vertices,
            )


def _apply_channels(subtask: SubtaskStatus, report: SubtaskUpdate) -> None:
    """A bounded subtask reports its channels' counts so far (``channels``); a continuous
    one what each epoch added (``channels_added``), as its restored writers count from zero."""
    if report.channels is not None:
        subtask.channels = dict(report.channels)
    if report.channels_added is not None:
        for key, count in report.channels_added.items():
            subtask.channels[key] = subtask.channels.get(key, 0) + count


def _vertex_state(states: list[str]) -> str:
    for state in ("FAILED", "CANCELED", "CANCELING", "RUNNING", "INITIALIZING", "DEPLOYING"):
        if state in states:
            return state
    if all(state == "FINISHED" for state in states):
        return "FINISHED"
    if "FINISHED" in states:
        return "RUNNING"
    return states[0] if states else "CREATED"


def process_name() -> str:
    """This process, as views name where a subtask ran: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"
