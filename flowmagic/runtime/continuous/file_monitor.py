"""A monitored ``FileSource`` in the continuous mode: new files, each read exactly once.

As Flink's continuous file enumerator, a thread on the driver lists the source's paths at
every discovery interval and takes the files it has not seen; it appends their lines to a
line log in the job's directory (the socket source's log), from which epochs read offset
ranges. Its position, which a checkpoint or savepoint keeps under the source's operator ID,
is what Flink's enumerator and readers keep: the paths already seen, and the files not yet
read to their end with how many of their lines were (Flink's pending splits and readers'
offsets). A job restored from it logs the rest of those files first, then goes on listing,
so no file is read twice and none is missed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from flowmagic.runtime.connectors.file_source import list_files, read_lines
from flowmagic.runtime.continuous.feeds import FeedContext, LogFeed, SourceReaderFailed
from flowmagic.runtime.continuous.sources import append_to_log, write_log_count

__all__ = ["FileMonitor", "FileMonitorFeed"]


class FileMonitorFeed(LogFeed):
    """A monitored FileSource's feed: the log its :class:`FileMonitor` writes."""

    def __init__(self, context: FeedContext, paths: list[str], charset: str, interval_ms: int):
        super().__init__(context)
        self.monitor = FileMonitor(paths, charset, interval_ms, self.log_dir, context.restored)

    def start(self) -> None:
        self.monitor.start()

    def stop(self) -> None:
        self.monitor.stop()

    def check(self, read: int) -> None:
        error = self.monitor.error
        if error is not None:
            raise SourceReaderFailed(f"{self.monitor.describe()}: {error.__class__.__name__}: {error}")

    def position(self, read: int, save: Callable[[bytes], str]) -> dict[str, Any] | None:
        return self.monitor.position(read)


class FileMonitor:
    """Lists ``paths`` every ``interval_ms`` and logs the lines of new files into ``log_dir``
    (after the rest of the files of ``restored``, a position of :meth:`position`)."""

    def __init__(
        self, paths: list[str], charset: str, interval_ms: int, log_dir: str, restored: dict[str, Any] | None = None
    ):
        self.paths, self.charset, self.interval = paths, charset, interval_ms / 1000
        self.log_dir = log_dir
        self.count = 0
        self.seen: set[str] = set((restored or {}).get("seen", ()))
        #: Files to log before listing: (path, lines of it already read).
        self._unfinished: list[tuple[str, int]] = [(path, skip) for path, skip in (restored or {}).get("pending", ())]
        #: The files in the log not known to be read to their end: (path, their first line's
        #: offset in the log, the lines of the file before it).
        self._logged: list[tuple[str, int, int]] = []
        self._lock = threading.Lock()
        os.makedirs(log_dir, exist_ok=True)
        write_log_count(log_dir, 0)
        #: Why listing or reading failed (the job fails with it); ``ended`` is set then.
        self.error: BaseException | None = None
        self.ended = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"flowmagic-files-{paths[0]}", daemon=True)

    def describe(self) -> str:
        return f"FileSource {', '.join(self.paths)}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        try:
            while self._unfinished and not self._stop.is_set():
                path, skip = self._unfinished[0]
                self._log(path, skip)
            while True:
                self.discover()
                if self._stop.wait(self.interval):
                    return
        except Exception as error:
            self.error = error
            self.ended.set()

    def discover(self) -> None:
        """Log the lines of every file that appeared since the last listing."""
        for path in list_files(self.paths):
            if path in self.seen or self._stop.is_set():
                continue
            self._log(path, 0)

    def _log(self, path: str, skip: int) -> None:
        count, skipped = self.count, 0
        for lines in read_lines(path, self.charset):
            if skipped < skip:
                dropped = min(skip - skipped, len(lines))
                skipped += dropped
                lines = lines[dropped:]
            count = append_to_log(self.log_dir, count, lines)
        with self._lock:
            self._logged.append((path, self.count, skip))
            self.count = count
            self.seen.add(path)
            if self._unfinished and self._unfinished[0][0] == path:
                self._unfinished.pop(0)
        write_log_count(self.log_dir, count)

    def position(self, read: int) -> dict[str, Any]:
        """The source's position once the epochs read the first ``read`` lines of the log:
        the paths seen, and the files not read to their end with the lines of each read."""
        with self._lock:
            ends = [first for _path, first, _skip in self._logged[1:]] + [self.count][: len(self._logged)]
            pending = []
            for (path, first, skip), end in zip(self._logged, ends, strict=True):
                if end > read:
                    pending.append([path, skip + max(read - first, 0)])
            # Files read to their end need no place in the next positions.
            self._logged = [entry for entry, end in zip(self._logged, ends, strict=True) if end > read]
            pending += [[path, skip] for path, skip in self._unfinished]
            return {"seen": sorted(self.seen | {path for path, _skip in self._unfinished}), "pending": pending}
