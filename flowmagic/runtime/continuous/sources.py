"""What drives the epochs of flowmagic's unbounded sources: Spark's clock, and line logs.

Spark's micro-batch loop runs the epochs, but flowmagic's sources own their offsets: the
driver decides each epoch's range of a source's offsets (what is available, as far as
admission control allows) and logs it with the epoch's time before the epoch first runs,
so that a replayed epoch reads the same records. Spark's stream only ticks:

* the clock (:func:`clock_frame`): a batch on every trigger, so that an epoch runs even
  without input, and processing-time timers fire on time;
* a line log: the lines a reader thread on the driver appended to a log in the checkpoint
  directory (a socket's, :class:`SocketLog`: Flink's socket source cannot replay, the log
  can; a monitored FileSource's, see :mod:`flowmagic.runtime.continuous.file_monitor`).

Which source feeds how is the source's own choice (:mod:`flowmagic.runtime.continuous.feeds`).
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

__all__ = [
    "TICK_MS",
    "SocketLog",
    "append_to_log",
    "clock_frame",
    "drop_log_before",
    "log_count",
    "read_log_range",
    "split_range",
    "write_log_count",
]

_LINES_PER_SEGMENT = 1 << 14
#: Seconds between a socket source's connections (Flink's DEFAULT_CONNECTION_RETRY_SLEEP).
_RECONNECT_DELAY = 0.5
#: How often an epoch runs at most when nothing keeps the job busy (ms): often enough for
#: processing-time timers, seldom enough that idle jobs leave the machine to others.
TICK_MS = 200


def clock_frame(spark: Any) -> Any:
    """The streaming DataFrame that makes Spark's micro-batch loop run a batch on every
    trigger: Spark's own ``rate-micro-batch`` source, one row a batch that nobody reads.

    A JVM source, so that starting the query starts no Python process and planning a batch
    makes no round trip to one (a Python data source costs both, seconds on a busy machine).
    """
    from pyspark.sql import functions

    frame = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1).option("numPartitions", 1).load()
    return frame.select(functions.lit(-1).alias("fm_source"))


def log_count(log_dir: str) -> int:
    """How many lines of the log in ``log_dir`` its reader published."""
    try:
        with open(os.path.join(log_dir, "count")) as file:
            return int(file.read() or 0)
    except FileNotFoundError:
        return 0


def _share(start: int, end: int, index: int, parallelism: int) -> tuple[int, int]:
    total = end - start
    return start + total * index // parallelism, start + total * (index + 1) // parallelism


def split_range(start: int, end: int, parallelism: int) -> list[list[tuple[int, int]]]:
    """Each subtask's contiguous share of the offsets ``start`` to ``end``."""
    return [[_share(start, end, index, parallelism)] if end > start else [] for index in range(parallelism)]


class SocketLog:
    """Reads lines from a TCP socket on the driver into a replayable log, as Flink's
    ``socketTextStream`` reads them (its ``SocketTextStreamFunction``): ``delimiter``-separated;
    when the server closes the connection, reconnecting until ``max_retry`` connections ended
    (-1: for ever), half a second apart, then the text after the last delimiter is a last line.
    A connection that fails (refused, reset) ends the reader with ``error``, after the lines
    read before it; the text after their last delimiter is dropped, as Flink's source drops it
    when it fails."""

    def __init__(self, host: str, port: int, delimiter: str, max_retry: int, log_dir: str):
        self.host, self.port, self.delimiter, self.max_retry = host, port, delimiter, max_retry
        self.log_dir = log_dir
        os.makedirs(log_dir, exist_ok=True)
        self.count = log_count(log_dir)
        # A run killed between logging lines and publishing them left them in the log: the
        # lines logged from now on must take their places.
        truncate_log(log_dir, self.count)
        self.error: BaseException | None = None
        #: Set when the reader ended: its last connection ended and no retry was left, or a
        #: connection failed (then ``error`` says why). ``count`` is final then.
        self.ended = threading.Event()
        self._stop = threading.Event()
        self._socket: socket.socket | None = None
        #: The text after the last delimiter: one buffer over all connections, as Flink's (a
        #: line cut by a reconnection is one line).
        self._pending = ""
        self._thread = threading.Thread(target=self._run, name=f"flowmagic-socket-{host}:{port}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        sock = self._socket
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(5)

    def _run(self) -> None:
        try:
            self._connect_and_read()
        except OSError as error:
            if not self._stop.is_set():
                self.error = error
        finally:
            self.ended.set()

    def _connect_and_read(self) -> None:
        ended_connections = 0
        while not self._stop.is_set():
            with socket.create_connection((self.host, self.port), timeout=5) as sock:
                self._socket = sock
                sock.settimeout(None)
                self._read(sock)
            if self._stop.is_set():
                return
            ended_connections += 1
            if self.max_retry != -1 and ended_connections >= self.max_retry:
                break
            self._stop.wait(_RECONNECT_DELAY)
        if self._pending and not self._stop.is_set():
            self._append([self._pending])

    def _read(self, sock: socket.socket) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while not self._stop.is_set():
            chunk = sock.recv(1 << 16)
            text = decoder.decode(chunk, final=not chunk)
            *lines, self._pending = (self._pending + text).split(self.delimiter)
            # Flink's SocketTextStreamFunction drops a trailing carriage return with "\n".
            if self.delimiter == "\n":
                lines = [line[:-1] if line.endswith("\r") else line for line in lines]
            if lines:
                self._append(lines)
            if not chunk:
                return

    def _append(self, lines: list[str]) -> None:
        self.count = append_to_log(self.log_dir, self.count, lines)
        write_log_count(self.log_dir, self.count)


def append_to_log(log_dir: str, count: int, lines: list[str]) -> int:
    """Append ``lines`` to the line log in ``log_dir`` that holds ``count`` lines; returns the
    new count. Readers see the lines once :func:`write_log_count` says so."""
    index, position = count, 0
    while position < len(lines):
        segment = index // _LINES_PER_SEGMENT
        chunk = lines[position : position + (segment + 1) * _LINES_PER_SEGMENT - index]
        with open(os.path.join(log_dir, f"segment-{segment:08d}.jsonl"), "a", encoding="utf-8") as file:
            file.write("".join(json.dumps(line) + "\n" for line in chunk))
        index += len(chunk)
        position += len(chunk)
    return index


def write_log_count(log_dir: str, count: int) -> None:
    """Publish the first ``count`` lines of the log to the source's reader."""
    temporary = os.path.join(log_dir, "count.tmp")
    with open(temporary, "w") as file:
        file.write(str(count))
    os.replace(temporary, os.path.join(log_dir, "count"))


def _segments(log_dir: str) -> Iterator[tuple[int, str]]:
    """The log's segment files: each one's number and path."""
    for name in os.listdir(log_dir):
        if name.startswith("segment-") and name.endswith(".jsonl"):
            yield int(name[len("segment-") : -len(".jsonl")]), os.path.join(log_dir, name)


def truncate_log(log_dir: str, count: int) -> None:
    """Drop the lines past the first ``count`` (appended by a writer that stopped before it
    recorded them)."""
    segment = count // _LINES_PER_SEGMENT
    for number, path in _segments(log_dir):
        if number > segment:
            os.remove(path)
        elif number == segment:
            keep = count - segment * _LINES_PER_SEGMENT
            with open(path, encoding="utf-8") as file:
                lines = file.readlines()[:keep]
            with open(path, "w", encoding="utf-8") as file:
                file.writelines(lines)


def drop_log_before(log_dir: str, offset: int) -> None:
    """Delete the segments whose every line lies before ``offset``: no epoch reads them again."""
    first_kept = offset // _LINES_PER_SEGMENT
    for number, path in _segments(log_dir):
        if number < first_kept:
            os.remove(path)


def read_log_range(log_dir: str, start: int, end: int) -> Iterator[str]:
    """Lines ``start`` to ``end`` (excluded) of a socket log."""
    index = start
    while index < end:
        segment = index // _LINES_PER_SEGMENT
        path = os.path.join(log_dir, f"segment-{segment:08d}.jsonl")
        first = segment * _LINES_PER_SEGMENT
        try:
            file = open(path, encoding="utf-8")  # noqa: SIM115 - closed by the with below
        except FileNotFoundError:
            raise RuntimeError(f"the line log {log_dir} no longer holds lines {index} to {end}") from None
        with file:
            for position, line in enumerate(file, first):
                if position >= end:
                    return
                if position >= index:
                    yield json.loads(line)
                    index = position + 1
        if index < (segment + 1) * _LINES_PER_SEGMENT and index < end:
            raise RuntimeError(f"the socket log {log_dir} lacks lines {index} to {end}")
