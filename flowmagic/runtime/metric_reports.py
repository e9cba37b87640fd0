"""The live metrics as typed reports: what a subtask sends the driver, and what views read.

A :class:`SubtaskUpdate` travels from a subtask to the driver's
:class:`~flowmagic.runtime.metrics.JobMonitor` (as a JSON line over the metrics channel, or
in process); a :class:`JobReport` is the monitor's picture of the whole job at one moment,
which the job view draws and a finished job keeps as ``JobResult.metrics``. Each has
``to_json()``: the plain data of the wire, or of a notebook's export.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ChannelWatermark",
    "CheckpointRecord",
    "CheckpointsReport",
    "ContinuousReport",
    "EventTimeReport",
    "JobReport",
    "OperatorStateReport",
    "PendingWindow",
    "SinkFilesReport",
    "SubtaskReport",
    "SubtaskUpdate",
    "VertexReport",
]


def _optional(value: Any, kind: type) -> Any:
    """``value`` when it is a ``kind`` (bools are not ints), else None: a report's field
    that is missing or malformed is left as the driver last knew it."""
    if isinstance(value, bool) and kind is not bool:
        return None
    return value if isinstance(value, kind) else None


#: The fields a report names otherwise on the wire.
_WIRE_NAMES = {"records_in": "in", "records_out": "out"}


@dataclass(frozen=True)
class ChannelWatermark:
    """One input channel of a subtask: the watermark it last brought, and whether its
    producer is idle (Flink's ``WatermarkStatus``)."""

    #: The subtask's input (gate) it belongs to, the producing vertex and its subtask.
    input: int
    producer: str
    producer_subtask: int
    watermark: int
    idle: bool
    #: Since when (seconds since the epoch) its watermark stands where it is, or it is idle.
    since: float

    def to_json(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "producer": self.producer,
            "producer_subtask": self.producer_subtask,
            "watermark": self.watermark,
            "idle": self.idle,
            "since": self.since,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> ChannelWatermark:
        return ChannelWatermark(
            input=int(data["input"]),
            producer=str(data["producer"]),
            producer_subtask=int(data["producer_subtask"]),
            watermark=int(data["watermark"]),
            idle=bool(data["idle"]),
            since=float(data["since"]),
        )


@dataclass(frozen=True)
class PendingWindow:
    """A window operator's earliest event-time timer: the window it fires (or clears) and
    when."""

    operator: str
    #: The key, as ``repr`` shows it (shortened).
    key: str
    #: The window's bounds in milliseconds (None: a window without bounds, GlobalWindow's).
    start: int | None
    end: int | None
    #: The watermark it waits for: the timer fires once the watermark reaches it.
    fires_at: int

    def to_json(self) -> dict[str, Any]:
        return {
            "operator": self.operator,
            "key": self.key,
            "start": self.start,
            "end": self.end,
            "fires_at": self.fires_at,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> PendingWindow:
        return PendingWindow(
            operator=str(data["operator"]),
            key=str(data["key"]),
            start=_optional(data.get("start"), int),
            end=_optional(data.get("end"), int),
            fires_at=int(data["fires_at"]),
        )


@dataclass(frozen=True)
class EventTimeReport:
    """Where a subtask stands in event time: its input channels' watermarks and its
    earliest pending event-time window."""

    channels: list[ChannelWatermark]
    pending: PendingWindow | None

    def to_json(self) -> dict[str, Any]:
        return {
            "channels": [channel.to_json() for channel in self.channels],
            "pending": None if self.pending is None else self.pending.to_json(),
        }

    @staticmethod
    def from_json(data: Any) -> EventTimeReport | None:
        """The report ``data`` holds; None when it is not one (malformed fields raise
        :class:`KeyError`, :class:`ValueError` or :class:`TypeError`)."""
        if not isinstance(data, dict) or not isinstance(data.get("channels"), list):
            return None
        pending = data.get("pending")
        return EventTimeReport(
            channels=[ChannelWatermark.from_json(channel) for channel in data["channels"]],
            pending=PendingWindow.from_json(pending) if isinstance(pending, dict) else None,
        )


@dataclass(frozen=True)
class SubtaskUpdate:
    """What one subtask attempt reports: its state and counters so far. A field left None
    leaves what the driver knows of it unchanged."""

    vertex: str
    subtask: int
    attempt: int = 0
    state: str | None = None
    #: The process it runs in (``host:pid``).
    host: str | None = None
    #: When the attempt started and ended (seconds since the epoch).
    start: float | None = None
    end: float | None = None
    records_in: int | None = None
    records_out: int | None = None
    watermark: int | None = None
    #: The user metrics of its operators, by identifier.
    metrics: dict[str, Any] | None = None
    #: The Spark stage and task it runs as.
    stage: int | None = None
    task: int | None = None
    #: Records handed to each consumer subtask (``"<vertex id>/<subtask>"``) so far, or (a
    #: continuous subtask, whose restored writers count from zero) in this epoch.
    channels: dict[str, int] | None = None
    channels_added: dict[str, int] | None = None
    #: Why the attempt failed (see :func:`flowmagic.runtime.failures.failure_details`).
    failure: dict[str, Any] | None = None
    #: Its input channels' watermarks and earliest pending event-time window.
    event_time: EventTimeReport | None = None

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object, without the fields left None."""
        data: dict[str, Any] = {"vertex": self.vertex, "subtask": self.subtask, "attempt": self.attempt}
        for name in (
            "state",
            "host",
            "start",
            "end",
            "records_in",
            "records_out",
            "watermark",
            "metrics",
            "stage",
            "task",
            "channels",
            "channels_added",
            "failure",
        ):
            value = getattr(self, name)
            if value is not None:
                data[_WIRE_NAMES.get(name, name)] = value
        if self.event_time is not None:
            data["event_time"] = self.event_time.to_json()
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> SubtaskUpdate | None:
        """The report a JSON object holds; None when it names no subtask. Counters that are
        not numbers raise (:class:`ValueError` or :class:`TypeError`)."""
        subtask = data.get("subtask")
        if not isinstance(subtask, int):
            return None
        channels, added = data.get("channels"), data.get("channels_added")
        return SubtaskUpdate(
            vertex=str(data.get("vertex")),
            subtask=subtask,
            attempt=int(data.get("attempt", 0)),
            state=None if data.get("state") is None else str(data["state"]),
            host=None if data.get("host") is None else str(data["host"]),
            start=None if data.get("start") is None else float(data["start"]),
            end=None if data.get("end") is None else float(data["end"]),
            records_in=None if data.get("in") is None else int(data["in"]),
            records_out=None if data.get("out") is None else int(data["out"]),
            watermark=_optional(data.get("watermark"), int),
            metrics=_optional(data.get("metrics"), dict),
            stage=_optional(data.get("stage"), int),
            task=_optional(data.get("task"), int),
            channels=(
                {str(key): int(count) for key, count in channels.items()} if isinstance(channels, dict) else None
            ),
            channels_added=(
                {str(key): int(count) for key, count in added.items()} if isinstance(added, dict) else None
            ),
            failure=_optional(data.get("failure"), dict),
            event_time=EventTimeReport.from_json(data.get("event_time")),
        )


@dataclass(frozen=True)
class SubtaskReport:
    """One ExecutionVertex (its latest attempt), as the web UI shows it."""

    vertex: str
    subtask: int
    name: str
    state: str
    attempt: int
    host: str
    start_time: float | None
    duration: float | None
    records_in: int
    records_out: int
    watermark: int | None
    #: The user metrics of its operators (``get_metrics_group()``), by identifier.
    metrics: dict[str, Any]
    #: Whether any report of it reached the driver (else its counters are unknown).
    reported: bool
    #: The Spark stage and task its latest attempt ran as, and the executor that ran it.
    stage: int | None
    task: int | None
    executor: str | None
    #: Records it handed each consumer subtask, by ``"<vertex id>/<subtask>"``.
    channels: dict[str, int]
    #: Its input channels' watermarks and earliest pending window (None: not reported).
    event_time: EventTimeReport | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "vertex": self.vertex,
            "subtask": self.subtask,
            "name": self.name,
            "state": self.state,
            "attempt": self.attempt,
            "host": self.host,
            "start_time": self.start_time,
            "duration": self.duration,
            "records_in": self.records_in,
            "records_out": self.records_out,
            "watermark": self.watermark,
            "metrics": dict(self.metrics),
            "reported": self.reported,
            "stage": self.stage,
            "task": self.task,
            "executor": self.executor,
            "channels": dict(self.channels),
            "event_time": None if self.event_time is None else self.event_time.to_json(),
        }


@dataclass(frozen=True)
class VertexReport:
    """One JobVertex: its subtasks and their totals."""

    id: str
    name: str
    state: str
    records_in: int
    records_out: int
    subtasks: list[SubtaskReport]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "state": self.state,
            "records_in": self.records_in,
            "records_out": self.records_out,
            "subtasks": [subtask.to_json() for subtask in self.subtasks],
        }


@dataclass(frozen=True)
class CheckpointRecord:
    """One completed checkpoint, as a row of the History of Flink's Checkpoints tab."""

    id: int
    #: The epoch whose end it is.
    epoch: int
    #: When it completed (seconds since the epoch), and how long its epoch took end to end.
    completed_at: float
    duration_ms: float
    #: Flink's Checkpointed Data Size (the files its epoch wrote: whole state, or only the
    #: keys that changed) and Full Checkpoint Data Size (every file it needs to restore).
    checkpointed_bytes: int
    full_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "epoch": self.epoch,
            "completed_at": self.completed_at,
            "duration_ms": self.duration_ms,
            "checkpointed_bytes": self.checkpointed_bytes,
            "full_bytes": self.full_bytes,
        }


@dataclass(frozen=True)
class CheckpointsReport:
    """A continuous job's checkpoints (Flink's Checkpoints tab)."""

    completed: int
    last_duration_ms: float | None
    last_size_bytes: int | None
    #: When the last one completed (seconds since the epoch).
    last_completed_at: float | None
    last_savepoint: str | None
    #: The latest checkpoints, oldest first (as many as Flink's ``web.checkpoints.history``).
    history: list[CheckpointRecord] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "completed": self.completed,
            "last_duration_ms": self.last_duration_ms,
            "last_size_bytes": self.last_size_bytes,
            "last_completed_at": self.last_completed_at,
            "last_savepoint": self.last_savepoint,
            "history": [record.to_json() for record in self.history],
        }


@dataclass(frozen=True)
class OperatorStateReport:
    """A stateful operator's state in one subtask, after that subtask's last epoch."""

    vertex: str
    subtask: int
    operator: str
    operator_id: str
    #: Keys it holds state of, and timers registered that have not fired.
    keys: int
    timers: int
    #: The bytes its last snapshot wrote, and whether that was its whole state or only the
    #: state of the keys that changed.
    snapshot_bytes: int
    whole: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "vertex": self.vertex,
            "subtask": self.subtask,
            "operator": self.operator,
            "operator_id": self.operator_id,
            "keys": self.keys,
            "timers": self.timers,
            "snapshot_bytes": self.snapshot_bytes,
            "whole": self.whole,
        }


@dataclass(frozen=True)
class SinkFilesReport:
    """A continuous job's FileSink part files: committed, and rolled but not yet committed."""

    committed: int
    pending: int

    def to_json(self) -> dict[str, Any]:
        return {"committed": self.committed, "pending": self.pending}


@dataclass(frozen=True)
class ContinuousReport:
    """What a continuous job adds: its status, epochs, restarts, checkpoints, load and
    newest output."""

    status: str
    epochs: int
    #: Flink's numRestarts, the strategy, and the failure the job last restarted after.
    restarts: int
    restart_strategy: str
    last_failure: str | None
    checkpoints: CheckpointsReport
    #: Per vertex id, per subtask: busy and backpressured milliseconds per second (None:
    #: not measured yet).
    load: dict[str, list[tuple[float, float] | None]]
    files: SinkFilesReport | None
    printed_total: int
    #: The newest printed lines.
    printed_tail: list[str]
    error: str | None
    #: Each stateful operator's state, per subtask.
    state: list[OperatorStateReport] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "epochs": self.epochs,
            "restarts": self.restarts,
            "restart_strategy": self.restart_strategy,
            "last_failure": self.last_failure,
            "checkpoints": self.checkpoints.to_json(),
            "load": {vertex: list(figures) for vertex, figures in self.load.items()},
            "files": self.files.to_json() if self.files is not None else None,
            "printed_total": self.printed_total,
            "printed_tail": list(self.printed_tail),
            "error": self.error,
            "state": [entry.to_json() for entry in self.state],
        }


@dataclass(frozen=True)
class JobReport:
    """A job's progress at one moment: per vertex its subtasks and totals."""

    job: str
    state: str
    #: Seconds since it started (None: not started).
    elapsed: float | None
    finished_subtasks: int
    total_subtasks: int
    #: Where subtasks report to (``host:port``); None when the live metrics are off.
    metrics_address: str | None
    reported_subtasks: int
    vertices: list[VertexReport] = field(default_factory=list)
    #: Set for a continuous job.
    continuous: ContinuousReport | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "job": self.job,
            "state": self.state,
            "elapsed": self.elapsed,
            "finished_subtasks": self.finished_subtasks,
            "total_subtasks": self.total_subtasks,
            "metrics_address": self.metrics_address,
            "reported_subtasks": self.reported_subtasks,
            "vertices": [vertex.to_json() for vertex in self.vertices],
        }
        if self.continuous is not None:
            data["continuous"] = self.continuous.to_json()
        return data
