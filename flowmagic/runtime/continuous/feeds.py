"""The driver's side of an unbounded source in the continuous mode: its *feed*.

A source class opens its feed when the job starts (``Source.open_feed``); the feed gives
Spark's micro-batch loop the source's streaming DataFrame, hands each epoch's tasks their
share of the input (which the source's subtasks turn into records, ``Source.epoch_batches``),
keeps the source's position in snapshots, and says when the source ended or failed. Three
ways of feeding, which a new source picks from (or extends):

* :class:`OffsetFeed`: records made from their offsets by the source's subtasks (a data
  generator): the tasks get offset ranges, paced at a rate if the source has one;
* :class:`LogFeed`: a reader on the driver appends lines to a replayable log in the job's
  directory (a socket, :class:`SocketFeed`; a monitored FileSource); the tasks get the lines;
* :class:`SparkFeed`: the rows of a Spark streaming DataFrame's micro-batch (``from_spark``).

The first two have offsets, and the driver picks each epoch's range of them
(:meth:`Feed.available`); Spark's stream only ticks.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flowmagic.errors import JobError
from flowmagic.runtime.continuous.sources import (
    SocketLog,
    append_to_log,
    drop_log_before,
    log_count,
    read_log_range,
    write_log_count,
)

__all__ = ["Feed", "FeedContext", "LogFeed", "OffsetFeed", "SocketFeed", "SourceReaderFailed", "SparkFeed"]


@dataclass(frozen=True)
class FeedContext:
    """What a source's feed is opened with."""

    node_id: int
    #: The source's vertex name (for messages) and parallelism.
    name: str
    parallelism: int
    #: The feed's own directory on the driver (a log's).
    directory: str
    #: The source's position in the snapshot the job restores from (None: it starts afresh),
    #: and a reader of that snapshot's files.
    restored: dict[str, Any] | None = None
    read_restored: Callable[[str], bytes] | None = None


class SourceReaderFailed(JobError):
    """A source's reader on the driver (a socket's, a monitored FileSource's) failed: the
    job fails without a restart, which would not start the reader again."""


def _identity(value: Any) -> Any:
    return value


class Feed:
    """An unbounded source's driver side; the base feeds nothing of its own."""

    #: Whether the source has offsets that the driver hands out (False: Spark's own source).
    has_offsets = False
    #: Whether an epoch whose range is empty has no input of the source (a Spark stream's
    #: batch is not known to be empty without a Spark job reading it).
    knows_input = True
    #: The offset of the job's first epoch (a restored source's position).
    start_offset = 0

    def __init__(self, context: FeedContext):
        self.context = context

    def frame(self, session: Any) -> Any:
        """The streaming DataFrame of the source's batches (its rows tagged ``fm_source``),
        None for a source whose offsets the driver hands out."""
        return None

    def available(self, start: int, admitted: int) -> int:
        """The end of the next epoch's range of offsets, which starts at ``start`` and
        holds at most ``admitted`` of them (``has_offsets`` sources only)."""
        raise NotImplementedError

    def start(self) -> None:
        """Start the source's reader, if it has one on the driver."""

    def stop(self) -> None:
        """Stop the source's reader."""

    def check(self, read: int) -> None:
        """Raise :class:`SourceReaderFailed` if the source's reader failed (with ``read``
        of its records taken by the epochs)."""

    def ended(self, read: int) -> bool:
        """Whether the source has ended and the epochs read all it had."""
        return False

    def epoch_input(self, sc: Any, batch: Any, shares: list[list[tuple[int, int]]]) -> Any:
        """The RDD of the epoch's input, one partition per source subtask (``shares``: each
        subtask's offset ranges)."""
        return sc.parallelize(shares, self.context.parallelism).flatMap(_identity)

    def position(self, read: int, save: Callable[[bytes], str]) -> dict[str, Any] | None:
        """The source's position once the epochs read ``read`` offsets, kept as its
        operator's state (None: nothing to keep); ``save(data)`` writes a file beside the
        snapshot's state and returns its path."""
        return {"offset": read}

    def forget_before(self, offset: int) -> None:
        """No kept snapshot reads before ``offset`` again."""


class OffsetFeed(Feed):
    """Offsets that the source's subtasks make records of, as fast as epochs admit them or
    at most ``rows_per_second`` from the moment the job runs."""

    has_offsets = True

    def __init__(self, context: FeedContext, rows_per_second: float | None = None):
        super().__init__(context)
        self.rows_per_second = rows_per_second
        self.start_offset = (context.restored or {}).get("offset", 0)
        #: The offset the rate counts from, and when; and the last range's end.
        self._paced_from: tuple[int, float] | None = None
        self._handed_out: int | None = None

    def available(self, start: int, admitted: int) -> int:
        if self.rows_per_second is None:
            end = start + admitted
        else:
            if start != self._handed_out:
                # The job's first epoch, or a restarted query's replay: the rate counts
                # from here (else the source would catch up the records of the pause at once).
                self._paced_from = (start, time.time())
            assert self._paced_from is not None
            first, since = self._paced_from
            end = max(start, min(first + int((time.time() - since) * self.rows_per_second), start + admitted))
        self._handed_out = end
        return end


class LogFeed(Feed):
    """Lines a reader on the driver logs (``count`` of them so far); the driver reads each
    epoch's lines from the log and ships them with the tasks, so executors need no access to
    the driver's disk."""

    has_offsets = True

    def __init__(self, context: FeedContext):
        super().__init__(context)
        self.log_dir = context.directory
        os.makedirs(self.log_dir, exist_ok=True)

    def available(self, start: int, admitted: int) -> int:
        return max(start, min(log_count(self.log_dir), start + admitted))

    def epoch_input(self, sc: Any, batch: Any, shares: list[list[tuple[int, int]]]) -> Any:
        lines = [[line for span in share for line in read_log_range(self.log_dir, *span)] for share in shares]
        return sc.parallelize(lines, self.context.parallelism).flatMap(_identity)

    def forget_before(self, offset: int) -> None:
        drop_log_before(self.log_dir, offset)


class SocketFeed(LogFeed):
    """A socket's lines, read by a :class:`SocketLog`. Flink's socket source keeps nothing;
    this keeps the lines received but not yet processed, which a restored job processes
    before those of its new connection."""

    def __init__(self, context: FeedContext, host: str, port: int, delimiter: str, max_retry: int):
        super().__init__(context)
        self._restore_unread_lines()
        self.log = SocketLog(host, port, delimiter, max_retry, self.log_dir)

    def _restore_unread_lines(self) -> None:
        path = (self.context.restored or {}).get("unread")
        if path is None:
            return
        assert self.context.read_restored is not None
        lines = json.loads(self.context.read_restored(path))
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            raise JobError(f"Cannot restore the source {self.context.name!r}: {path} is not a list of lines.")
        write_log_count(self.log_dir, append_to_log(self.log_dir, 0, lines))

    def start(self) -> None:
        self.log.start()

    def stop(self) -> None:
        self.log.stop()

    def check(self, read: int) -> None:
        # Flink's socket source fails its job when its connection fails (refused, reset),
        # after the lines it read before: here once the epochs read every line logged.
        log = self.log
        if log.ended.is_set() and log.error is not None and read >= log.count:
            error = log.error
            raise SourceReaderFailed(f"Socket source {log.host}:{log.port}: {error.__class__.__name__}: {error}")

    def ended(self, read: int) -> bool:
        log = self.log
        return log.ended.is_set() and log.error is None and read >= log.count

    def position(self, read: int, save: Callable[[bytes], str]) -> dict[str, Any] | None:
        count = self.log.count
        if count <= read:
            return None  # as Flink's socket source: nothing to keep
        return {"unread": save(json.dumps(list(read_log_range(self.log_dir, read, count))).encode())}


class SparkFeed(Feed):
    """A Spark streaming DataFrame's rows (``from_spark``): Spark's own checkpoint of the job
    owns its offsets, so the source keeps no position; a restored job's frame starts as its
    options say."""

    knows_input = False

    def __init__(self, context: FeedContext, frame: Any):
        super().__init__(context)
        if frame is None or not frame.isStreaming:
            raise JobError(f"{context.name!r}: from_spark() needs a streaming DataFrame (spark.readStream...).")
        self._frame = frame
        self.columns = list(frame.columns)

    def frame(self, session: Any) -> Any:
        from pyspark.sql import functions

        return self._frame.withColumn("fm_source", functions.lit(self.context.node_id))

    def epoch_input(self, sc: Any, batch: Any, shares: list[list[tuple[int, int]]]) -> Any:
        from pyspark.sql import functions

        parallelism = self.context.parallelism
        rows = batch.where(functions.col("fm_source") == self.context.node_id).select(*self.columns).rdd
        return rows.coalesce(parallelism) if rows.getNumPartitions() >= parallelism else rows.repartition(parallelism)

    def position(self, read: int, save: Callable[[bytes], str]) -> dict[str, Any] | None:
        return None
