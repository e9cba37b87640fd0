"""Live per-subtask metrics: executors report to the driver over an authenticated socket.

The driver listens on its own address (the one executors already reach it by) with a
per-run secret; executors connect, prove the secret, and send JSON lines with their
subtask's state and counters several times a second. Only JSON is ever read from the
network, never pickles.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import socket
import socketserver
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from flowmagic.graph.execution_graph import ExecutionState

__all__ = ["JobMonitor", "MetricsServer", "Reporter", "SubtaskStatus"]

STATES = frozenset(ExecutionState)
TERMINAL = frozenset(state for state in ExecutionState if state.is_terminal)
REPORT_INTERVAL = 0.25


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

    @property
    def duration(self) -> float | None:
        if self.start_time is None:
            return None
        return (self.end_time or time.time()) - self.start_time

    def to_dict(self) -> dict[str, Any]:
        return {
            "vertex": self.vertex_id,
            "subtask": self.index,
            "name": self.name,
            "state": self.state,
            "attempt": self.attempt,
            "host": self.host,
            "start_time": self.start_time,
            "duration": self.duration,
            "records_in": self.records_in,
            "records_out": self.records_out,
            "watermark": self.watermark,
        }


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

    def update(self, report: dict[str, Any]) -> None:
        """Apply one executor report (already parsed JSON)."""
        with self.lock:
            subtasks = self.vertices.get(str(report.get("vertex")))
            index = report.get("subtask")
            if subtasks is None or not isinstance(index, int) or not 0 <= index < len(subtasks):
                return
            subtask = subtasks[index]
            attempt = int(report.get("attempt", 0))
            if attempt < subtask.attempt:
                return
            if attempt > subtask.attempt or subtask.state in ("CREATED", "SCHEDULED"):
                subtask.attempt = attempt
                subtask.start_time = float(report.get("start", time.time()))
                subtask.end_time = None
            state = str(report.get("state", subtask.state))
            if state in STATES and not (
                subtask.state in TERMINAL and state not in TERMINAL and attempt == subtask.attempt
            ):
                subtask.state = state
            subtask.host = str(report.get("host", subtask.host))
            subtask.records_in = int(report.get("in", subtask.records_in))
            subtask.records_out = int(report.get("out", subtask.records_out))
            if isinstance(report.get("watermark"), int):
                subtask.watermark = report["watermark"]
            if state in TERMINAL:
                subtask.end_time = float(report.get("end", time.time()))
            if "failure" in report and isinstance(report["failure"], dict):
                self.failures.append(report["failure"])

    def wait_for_reports(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until every subtask reported an end: the last reports
        of a finished Spark job may still be on their way."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                if all(s.state in TERMINAL for ts in self.vertices.values() for s in ts):
                    return
            time.sleep(0.02)

    def snapshot(self) -> dict[str, Any]:
        """Plain data for views: per vertex its subtasks and totals."""
        with self.lock:
            vertices = []
            for vertex_id, subtasks in self.vertices.items():
                states = [s.state for s in subtasks]
                vertices.append(
                    {
                        "id": vertex_id,
                        "name": self.vertex_names[vertex_id],
                        "state": _vertex_state(states),
                        "records_in": sum(s.records_in for s in subtasks),
                        "records_out": sum(s.records_out for s in subtasks),
                        "subtasks": [s.to_dict() for s in subtasks],
                    }
                )
            finished = sum(1 for s in (t for ts in self.vertices.values() for t in ts) if s.state == "FINISHED")
            total = sum(len(ts) for ts in self.vertices.values())
            elapsed = None if self.start_time is None else (self.end_time or time.time()) - self.start_time
            return {
                "job": self.job_name,
                "state": self.state,
                "elapsed": elapsed,
                "finished_subtasks": finished,
                "total_subtasks": total,
                "vertices": vertices,
            }


def _vertex_state(states: list[str]) -> str:
    for state in ("FAILED", "CANCELED", "CANCELING", "RUNNING", "INITIALIZING", "DEPLOYING"):
        if state in states:
            return state
    if all(state == "FINISHED" for state in states):
        return "FINISHED"
    if "FINISHED" in states:
        return "RUNNING"
    return states[0] if states else "CREATED"


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        server: MetricsServer = self.server.owner  # type: ignore[attr-defined]
        hello = self.rfile.readline(4096)
        try:
            token = json.loads(hello).get("secret", "")
        except (ValueError, AttributeError):
            return
        if not isinstance(token, str) or not hmac.compare_digest(token, server.secret):
            return
        for line in self.rfile:
            if len(line) > 1 << 20:
                return
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if isinstance(report, dict):
                server.monitor.update(report)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class MetricsServer:
    """Receives executor reports for one job and applies them to its :class:`JobMonitor`."""

    def __init__(self, host: str, monitor: JobMonitor):
        self.monitor = monitor
        self.secret = secrets.token_hex(24)
        self._server = _Server((host, 0), _Handler)
        self._server.owner = self  # type: ignore[attr-defined]
        bound_host, port = self._server.server_address[:2]
        self.address: tuple[str, int] = (str(bound_host), int(port))
        # A short poll interval: shutting down waits for the serving loop to look up.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="flowmagic-metrics", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Reporter:
    """Executor side: sends one subtask's state and counters while it runs."""

    def __init__(self, address: tuple[str, int] | None, secret: str, vertex: str, index: int, attempt: int, stats):
        self.stats = stats
        self.base = {
            "vertex": vertex,
            "subtask": index,
            "attempt": attempt,
            "host": f"{socket.gethostname()}:{os.getpid()}",
        }
        self._socket: socket.socket | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        if address is None:
            return
        try:
            self._socket = socket.create_connection((address[0], address[1]), timeout=2)
            self._socket.sendall(json.dumps({"secret": secret}).encode() + b"\n")
        except OSError:
            # Metrics are best effort: a job must not fail because the notebook is unreachable.
            self._socket = None
            return
        self._thread = threading.Thread(target=self._loop, name="flowmagic-reporter", daemon=True)
        self._thread.start()

    def _send(self, **extra: Any) -> None:
        if self._socket is None:
            return
        report = {
            **self.base,
            "state": self.stats.state,
            "in": self.stats.records_in,
            "out": self.stats.records_out,
            "watermark": self.stats.watermark,
            "start": self.stats.started,
            **extra,
        }
        with self._lock:
            if self._socket is None:
                return
            try:
                self._socket.sendall(json.dumps(report, default=str).encode() + b"\n")
            except OSError:
                self._socket = None

    def _loop(self) -> None:
        while not self._stop.wait(REPORT_INTERVAL):
            self._send()

    def finish(self, state: str, failure: dict[str, Any] | None = None) -> None:
        self._stop.set()
        self.stats.state = state
        extra: dict[str, Any] = {"end": time.time()}
        if failure is not None:
            extra["failure"] = failure
        self._send(**extra)
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.close()
            self._socket = None
