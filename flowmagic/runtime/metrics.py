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
import selectors
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flowmagic.graph.execution_graph import ExecutionState

__all__ = ["JobMonitor", "MetricsServer", "Reporter", "SubtaskStatus", "process_name"]

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
            "metrics": dict(self.metrics),
            "reported": self.reported,
            "stage": self.stage,
            "task": self.task,
            "executor": self.executor,
            "channels": dict(self.channels),
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
    #: Where executors report to (``host:port``); None when the live metrics are off.
    metrics_address: str | None = None
    #: On Spark: the executor ids of Spark tasks, given a stage and the task ids asked about
    #: (called by :meth:`snapshot`, outside the lock, for tasks whose executor is not known yet).
    executor_lookup: Callable[[int, set[int]], dict[int, str]] | None = field(default=None, repr=False)
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
            subtask.reported = True
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
            if isinstance(report.get("task"), int) and report["task"] != subtask.task:
                subtask.task = report["task"]
                subtask.stage = report.get("stage") if isinstance(report.get("stage"), int) else None
                subtask.executor = None
            subtask.records_in = int(report.get("in", subtask.records_in))
            subtask.records_out = int(report.get("out", subtask.records_out))
            if isinstance(report.get("watermark"), int):
                subtask.watermark = report["watermark"]
            if isinstance(report.get("metrics"), dict):
                subtask.metrics = report["metrics"]
            _apply_channels(subtask, report)
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

    def snapshot(self) -> dict[str, Any]:
        """Plain data for views: per vertex its subtasks and totals."""
        self._resolve_executors()
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
            reported = sum(1 for ts in self.vertices.values() for s in ts if s.reported)
            elapsed = None if self.start_time is None else (self.end_time or time.time()) - self.start_time
            return {
                "job": self.job_name,
                "state": self.state,
                "elapsed": elapsed,
                "finished_subtasks": finished,
                "total_subtasks": total,
                "metrics_address": self.metrics_address,
                "reported_subtasks": reported,
                "vertices": vertices,
            }


def _apply_channels(subtask: SubtaskStatus, report: dict[str, Any]) -> None:
    """A bounded subtask reports its channels' counts so far (``channels``); a continuous
    one what each epoch added (``channels_added``), as its restored writers count from zero."""
    channels = report.get("channels")
    if isinstance(channels, dict):
        subtask.channels = {str(key): int(count) for key, count in channels.items()}
    added = report.get("channels_added")
    if isinstance(added, dict):
        for key, count in added.items():
            subtask.channels[str(key)] = subtask.channels.get(str(key), 0) + int(count)


def _vertex_state(states: list[str]) -> str:
    for state in ("FAILED", "CANCELED", "CANCELING", "RUNNING", "INITIALIZING", "DEPLOYING"):
        if state in states:
            return state
    if all(state == "FINISHED" for state in states):
        return "FINISHED"
    if "FINISHED" in states:
        return "RUNNING"
    return states[0] if states else "CREATED"


#: An executor proves the secret at once; a client that has not within this time is dropped.
HELLO_TIMEOUT = 2.0
#: Connections that have not proved the secret yet, at most; the oldest is dropped for a new one.
MAX_PENDING = 64
MAX_HELLO = 4096
#: A report line is a few hundred bytes; a connection sending a longer one is dropped.
MAX_LINE = 1 << 20
_RECEIVE = 1 << 16


class _Connection:
    """One client: its socket, what it sent that is not a whole line yet, and its hello deadline."""

    __slots__ = ("authenticated", "buffer", "deadline", "sock")

    def __init__(self, sock: socket.socket, deadline: float):
        self.sock = sock
        self.buffer = bytearray()
        self.deadline = deadline
        self.authenticated = False


class MetricsServer:
    """Receives executor reports for one job and applies them to its :class:`JobMonitor`.

    One thread serves every connection through a selector, so an idle or hostile client
    costs a socket and a buffer, never a thread. A client must send the per-run secret
    within ``hello_timeout`` seconds; at most ``max_pending`` clients may be waiting to do
    so. Lines are cut at ``MAX_LINE`` bytes as they arrive. Whatever a client gets wrong is
    dropped without a word and counted in :attr:`dropped`. :meth:`close` closes every socket.
    """

    def __init__(
        self, host: str, monitor: JobMonitor, *, hello_timeout: float = HELLO_TIMEOUT, max_pending: int = MAX_PENDING
    ):
        self.monitor = monitor
        self.secret = secrets.token_hex(24)
        self.hello_timeout = hello_timeout
        self.max_pending = max_pending
        #: Why connections or lines were dropped (``"hello timeout"``, ``"bad hello"``,
        #: ``"evicted"``, ``"line too long"``, ``"bad report"``, ``"error"``) and how often.
        self.dropped: Counter[str] = Counter()
        self._secret = self.secret.encode()
        self._listener = socket.create_server((host, 0))
        self._listener.setblocking(False)
        bound_host, port = self._listener.getsockname()[:2]
        self.address: tuple[str, int] = (str(bound_host), int(port))
        monitor.metrics_address = f"{self.address[0]}:{self.address[1]}"
        self._wake_receiver, self._wake_sender = socket.socketpair()
        self._wake_receiver.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ)
        self._selector.register(self._wake_receiver, selectors.EVENT_READ)
        # Insertion order is accept order, hence deadline order: the oldest comes first.
        self._pending: dict[_Connection, None] = {}
        self._connections: set[_Connection] = set()
        self._closing = False
        self._thread = threading.Thread(target=self._serve, name="flowmagic-metrics", daemon=True)
        self._thread.start()

    @property
    def open_connections(self) -> int:
        """Client connections currently open (authenticated or not)."""
        return len(self._connections)

    def close(self) -> None:
        """Stop serving and close the listening socket and every connection."""
        if self._closing:
            return
        self._closing = True
        with contextlib.suppress(OSError):
            self._wake_sender.send(b"x")
        self._thread.join(10)
        self._wake_sender.close()

    def _serve(self) -> None:
        try:
            while not self._closing:
                timeout = None
                if self._pending:
                    timeout = max(0.0, next(iter(self._pending)).deadline - time.monotonic())
                for key, _events in self._selector.select(timeout):
                    try:
                        if key.fileobj is self._listener:
                            self._accept()
                        elif key.data is not None:
                            self._receive(key.data)
                    except Exception:
                        # Nothing a client does may reach the notebook as a traceback.
                        if key.data is not None:
                            self._drop(key.data, "error")
                        else:
                            self.dropped["error"] += 1
                self._expire()
        finally:
            for connection in list(self._connections):
                self._drop(connection)
            self._selector.close()
            self._listener.close()
            self._wake_receiver.close()

    def _accept(self) -> None:
        # Bounded, so that a flood of connections cannot starve the connected executors.
        for _ in range(self.max_pending):
            try:
                sock, _address = self._listener.accept()
            except BlockingIOError:
                return
            except OSError:
                self.dropped["accept failed"] += 1
                return
            if len(self._pending) >= self.max_pending:
                self._drop(next(iter(self._pending)), "evicted")
            sock.setblocking(False)
            connection = _Connection(sock, time.monotonic() + self.hello_timeout)
            self._pending[connection] = None
            self._connections.add(connection)
            self._selector.register(sock, selectors.EVENT_READ, connection)

    def _expire(self) -> None:
        now = time.monotonic()
        while self._pending:
            oldest = next(iter(self._pending))
            if oldest.deadline > now:
                return
            self._drop(oldest, "hello timeout")

    def _drop(self, connection: _Connection, reason: str | None = None) -> None:
        if reason is not None:
            self.dropped[reason] += 1
        self._pending.pop(connection, None)
        self._connections.discard(connection)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(connection.sock)
        connection.sock.close()

    def _receive(self, connection: _Connection) -> None:
        try:
            data = connection.sock.recv(_RECEIVE)
        except BlockingIOError:
            return
        except OSError:
            self._drop(connection, "reset")
            return
        if not data:
            self._drop(connection, None if connection.authenticated else "closed before hello")
            return
        connection.buffer += data
        if connection.authenticated or self._authenticate(connection):
            self._apply_lines(connection)

    def _authenticate(self, connection: _Connection) -> bool:
        buffer = connection.buffer
        end = buffer.find(b"\n", 0, MAX_HELLO)
        if end < 0:
            if len(buffer) >= MAX_HELLO:
                self._drop(connection, "bad hello")
            return False
        hello = bytes(buffer[:end])
        del buffer[: end + 1]
        if not self._proves_secret(hello):
            self._drop(connection, "bad hello")
            return False
        connection.authenticated = True
        self._pending.pop(connection, None)
        return True

    def _proves_secret(self, hello: bytes) -> bool:
        try:
            token = json.loads(hello)["secret"]
            # Compared as bytes: compare_digest refuses str with non-ASCII characters.
            return isinstance(token, str) and hmac.compare_digest(token.encode(), self._secret)
        except Exception:
            return False

    def _apply_lines(self, connection: _Connection) -> None:
        buffer = connection.buffer
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            if end - start > MAX_LINE:
                self._drop(connection, "line too long")
                return
            self._apply(bytes(buffer[start:end]))
            start = end + 1
        del buffer[:start]
        if len(buffer) > MAX_LINE:
            self._drop(connection, "line too long")

    def _apply(self, line: bytes) -> None:
        try:
            report = json.loads(line)
            if isinstance(report, dict):
                self.monitor.update(report)
                return
        except Exception:
            pass
        self.dropped["bad report"] += 1


def process_name() -> str:
    """This process, as views name where a subtask ran: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


#: Per executor process, the runs (by secret) whose driver could not be reached: their later
#: subtasks do not try again.
_unreachable: set[str] = set()
CONNECT_TIMEOUT = 2.0


class Reporter:
    """Executor side: sends one subtask's state and counters while it runs.

    Connecting happens on the reporter's own thread, never on the task's path: a driver
    that cannot be reached delays no subtask, and once a connection to it failed, later
    subtasks in the same executor process do not try again.
    """

    def __init__(
        self,
        address: tuple[str, int] | None,
        secret: str,
        vertex: str,
        index: int,
        attempt: int,
        stats,
        spark_task: tuple[int, int] | None = None,
    ):
        self.stats = stats
        self.base: dict[str, Any] = {
            "vertex": vertex,
            "subtask": index,
            "attempt": attempt,
            "host": process_name(),
        }
        if spark_task is not None:
            self.base["stage"], self.base["task"] = spark_task
        self._socket: socket.socket | None = None
        self._final: dict[str, Any] | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        if address is None or secret in _unreachable:
            return
        self._thread = threading.Thread(
            target=self._run, args=((address[0], address[1]), secret), name="flowmagic-reporter", daemon=True
        )
        self._thread.start()

    def _run(self, address: tuple[str, int], secret: str) -> None:
        try:
            sock = socket.create_connection(address, timeout=CONNECT_TIMEOUT)
            sock.sendall(json.dumps({"secret": secret}).encode() + b"\n")
        except OSError:
            # Metrics are best effort: a job must not fail because the notebook is unreachable.
            _unreachable.add(secret)
            return
        with self._lock:
            self._socket = sock
            final = self._final
        if final is not None:
            # The subtask finished while this thread was connecting.
            self._send(**final)
            self._close()
            return
        while not self._stop.wait(REPORT_INTERVAL):
            self._send()

    def _send(self, **extra: Any) -> None:
        report = {
            **self.base,
            "state": self.stats.state,
            "in": self.stats.records_in,
            "out": self.stats.records_out,
            "watermark": self.stats.watermark,
            "start": self.stats.started,
            "metrics": self.stats.user_metrics(),
            "channels": self.stats.count_channels(),
            **extra,
        }
        with self._lock:
            if self._socket is None:
                return
            try:
                self._socket.sendall(json.dumps(report, default=str).encode() + b"\n")
            except OSError:
                self._socket = None

    def _close(self) -> None:
        with self._lock:
            sock, self._socket = self._socket, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

    def finish(self, state: str, failure: dict[str, Any] | None = None) -> None:
        """Send the subtask's final state (now, or once connected) and stop reporting."""
        self.stats.state = state
        final: dict[str, Any] = {"end": time.time()}
        if failure is not None:
            final["failure"] = failure
        with self._lock:
            self._final = final
            self._stop.set()
            connected = self._socket is not None
        if connected:
            self._send(**final)
            self._close()
