"""flowmagic's sources as Spark Python streaming data sources (``spark.readStream.format("flowmagic")``).

Spark's micro-batch loop owns the offsets: a source only says, when asked, how far it got
(``latestOffset``), and how a range of offsets splits into per-subtask ranges
(``partitions``); the rows Spark reads are those ranges, ``(source, subtask, start, end)``,
and the source operator in the epoch's job makes the records of its range. So a replayed
epoch reads the same records:

* ``offsets``: records the source's subtasks make from the offsets of their range (a data
  generator's ``generator(index)``), at most ``rows_per_second`` from the moment the job runs
  (a restored source starts at its savepoint's position);
* ``log``: the lines a reader thread on the driver appended to a log in the checkpoint
  directory (a socket's: Flink's socket source cannot replay, the log can; a monitored
  FileSource's, see :mod:`flowmagic.runtime.continuous.file_monitor`);
* ``clock``: no rows, only time: its offset moves with the wall clock, so an epoch runs on
  every trigger even without input, and processing-time timers fire on time.

Which source feeds how is the source's own choice (:mod:`flowmagic.runtime.continuous.feeds`).
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "SCHEMA",
    "SocketLog",
    "SourceDescriptor",
    "append_to_log",
    "drop_log_before",
    "read_admission",
    "read_log_range",
    "read_range",
    "register_data_source",
    "source_frame",
    "split_range",
    "write_admission",
    "write_log_count",
    "write_range",
]

#: The columns of a flowmagic source's rows: the range of offsets one subtask reads.
SCHEMA = "fm_source INT, fm_subtask INT, fm_start LONG, fm_end LONG"

_LINES_PER_SEGMENT = 1 << 14
#: Seconds between a socket source's connections (Flink's DEFAULT_CONNECTION_RETRY_SLEEP).
_RECONNECT_DELAY = 0.5


@dataclass(frozen=True)
class SourceDescriptor:
    """What the data source needs to know of one flowmagic source (JSON, passed as an option)."""

    #: How the offsets move: ``offsets``, ``log`` or ``clock`` (see the module's docstring).
    feed: str
    node_id: int
    parallelism: int
    #: offsets: rows per second over all subtasks (None: as fast as admitted).
    rows_per_second: float | None = None
    #: The most records one epoch admits (bounded memory for fast sources); the driver may
    #: admit fewer (see :func:`write_admission`).
    max_per_epoch: int = 100_000
    #: log: the directory of the line log.
    log_dir: str | None = None
    #: clock: how often the offset moves, in ms.
    tick_ms: int = 200
    #: Where the planner writes each batch's range (``<start>.json``: its end), so the
    #: driver knows an epoch's ranges without a Spark job reading them.
    ranges_dir: str | None = None
    #: The offset the job's first batch starts at (a restored source's position).
    start: int = 0

    def to_option(self) -> str:
        return json.dumps(asdict(self))


def _count(log_dir: str) -> int:
    try:
        with open(os.path.join(log_dir, "count")) as file:
            return int(file.read() or 0)
    except FileNotFoundError:
        return 0


class _Partition:
    """A subtask's range of one epoch (an ``InputPartition`` by duck typing: picklable)."""

    def __init__(self, value: tuple[int, int, int, int]):
        self.value = value


def _share(start: int, end: int, index: int, parallelism: int) -> tuple[int, int]:
    total = end - start
    return start + total * index // parallelism, start + total * (index + 1) // parallelism


def _reader_class() -> type:
    from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

    class FlowmagicStreamReader(DataSourceStreamReader):
        def __init__(self, descriptor: SourceDescriptor):
            self.descriptor = descriptor
            #: The first offset this reader was asked to go on from, and when: a rate counts
            #: from there (a restored or restarted source would otherwise wait until the
            #: clock caught up with the records made before).
            self.paced_from: tuple[int, float] | None = None

        def initialOffset(self) -> dict:
            return {"records": self.descriptor.start, "tick": 0}

        def _available(self, start: int) -> int:
            descriptor = self.descriptor
            admitted = read_admission(descriptor.ranges_dir, descriptor.max_per_epoch)
            if descriptor.feed == "log":
                assert descriptor.log_dir is not None
                available = _count(descriptor.log_dir)
            elif descriptor.feed == "offsets":
                if descriptor.rows_per_second is None:
                    available = start + admitted
                else:
                    if self.paced_from is None:
                        self.paced_from = (start, time.time())
                    first, since = self.paced_from
                    available = first + int((time.time() - since) * descriptor.rows_per_second)
            else:
                return start
            return max(start, min(available, start + admitted))

        def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
            begin = start["records"] if start else self.descriptor.start
            return {"records": self._available(begin), "tick": int(time.time() * 1000) // self.descriptor.tick_ms}

        def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
            descriptor = self.descriptor
            first, last = start["records"], end["records"]
            if descriptor.ranges_dir is not None:
                write_range(descriptor.ranges_dir, first, last)
            if descriptor.feed == "clock" or first == last:
                return [InputPartition((descriptor.node_id, -1, 0, 0))]
            return [
                InputPartition((descriptor.node_id, index, *_share(first, last, index, descriptor.parallelism)))
                for index in range(descriptor.parallelism)
            ]

        def read(self, partition: Any) -> Iterator[tuple[int, int, int, int]]:
            node_id, subtask, first, last = partition.value
            if subtask >= 0:
                yield (node_id, subtask, first, last)

        def commit(self, end: dict) -> None:
            """Spark committed the epoch's offsets: nothing to release here (the job drops the
            log's lines once no kept manifest needs them, see ``drop_log_before``)."""

    return FlowmagicStreamReader


def _data_source_class() -> type:
    from pyspark.sql.datasource import DataSource

    reader = _reader_class()

    class FlowmagicDataSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "flowmagic"

        def schema(self) -> str:
            return SCHEMA

        def streamReader(self, schema: Any) -> Any:
            return reader(SourceDescriptor(**json.loads(self.options["descriptor"])))

    return FlowmagicDataSource


_REGISTERED: set[int] = set()


def register_data_source(spark: Any) -> None:
    """Make ``format("flowmagic")`` known to ``spark`` (once per session)."""
    if id(spark) in _REGISTERED:
        return
    spark.dataSource.register(_data_source_class())
    _REGISTERED.add(id(spark))


def source_frame(spark: Any, descriptor: SourceDescriptor) -> Any:
    """The streaming DataFrame of one flowmagic source's ranges."""
    register_data_source(spark)
    return spark.readStream.format("flowmagic").option("descriptor", descriptor.to_option()).load()


def write_range(ranges_dir: str, start: int, end: int) -> None:
    """Record that the batch starting at offset ``start`` ends at ``end``.

    Spark plans a batch (here, on the driver) before ``foreachBatch`` runs it, and plans a
    replayed batch with the offsets it logged, so the file is written again with the same
    end; batches run one after the other, so the driver reads it before the next is planned.
    """
    os.makedirs(ranges_dir, exist_ok=True)
    path = os.path.join(ranges_dir, f"{start}.json")
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w") as file:
        file.write(json.dumps({"end": end}))
    os.replace(temporary, path)


def write_admission(ranges_dir: str, records: int) -> None:
    """Admit at most ``records`` records into each of the source's next epochs."""
    os.makedirs(ranges_dir, exist_ok=True)
    path = os.path.join(ranges_dir, "admission")
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w") as file:
        file.write(str(records))
    os.replace(temporary, path)


def read_admission(ranges_dir: str | None, default: int) -> int:
    """How many records the driver admits into the next epoch (``default`` if it did not say)."""
    if ranges_dir is None:
        return default
    try:
        with open(os.path.join(ranges_dir, "admission")) as file:
            return min(int(file.read()), default)
    except (FileNotFoundError, ValueError):
        return default


def read_range(ranges_dir: str, start: int) -> int | None:
    """The end of the batch that starts at ``start`` (None: Spark planned nothing of this
    source for the batch, as it does when the source's offsets did not move)."""
    try:
        with open(os.path.join(ranges_dir, f"{start}.json")) as file:
            end: int = json.load(file)["end"]
    except FileNotFoundError:
        return None
    return end


def split_range(start: int, end: int, parallelism: int) -> list[list[tuple[int, int]]]:
    """Each subtask's share of the offsets ``start`` to ``end`` (as the planner splits them)."""
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
        self.count = _count(log_dir)
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
