"""The live metrics channel: subtasks on Spark executors report to the driver over an
authenticated socket.

The driver listens on its own address (the one executors already reach it by) with a
per-run secret; executors connect, prove the secret, and send JSON lines with their
subtask's state and counters several times a second. Only JSON is ever read from the
network, never pickles.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
import selectors
import socket
import threading
import time
from collections import Counter
from dataclasses import replace
from typing import Any

from flowmagic.runtime.metric_reports import SubtaskUpdate
from flowmagic.runtime.metrics import JobMonitor, process_name

__all__ = ["MetricsServer", "Reporter", "process_name"]

#: How often a running subtask reports (s).
REPORT_INTERVAL = 0.25

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
            data = json.loads(line)
            if isinstance(data, dict):
                report = SubtaskUpdate.from_json(data)
                if report is not None:
                    self.monitor.update(report)
                return
        except Exception:
            pass
        self.dropped["bad report"] += 1


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
        stage, task = spark_task if spark_task is not None else (None, None)
        self.base = SubtaskUpdate(vertex, index, attempt, host=process_name(), stage=stage, task=task)
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

    def _send(self, **final: Any) -> None:
        stats = self.stats
        report = replace(
            self.base,
            state=stats.state,
            records_in=stats.records_in,
            records_out=stats.records_out,
            watermark=stats.watermark,
            start=stats.started,
            metrics=stats.user_metrics(),
            channels=stats.count_channels(),
            event_time=stats.event_time(),
            **final,
        )
        with self._lock:
            if self._socket is None:
                return
            try:
                self._socket.sendall(json.dumps(report.to_json(), default=str).encode() + b"\n")
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
