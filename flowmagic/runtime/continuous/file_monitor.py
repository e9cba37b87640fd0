"""A monitored ``FileSource`` in the continuous mode: new files, each read exactly once.

As Flink's continuous file enumerator, a thread on the driver lists the source's paths at
every discovery interval and takes the files it has not seen; it appends their lines to a
line log in the job's checkpoint directory (the socket source's log), from which epochs read
offset ranges. The files seen and the lines logged are recorded together in one file
written atomically, so a run that resumes from the checkpoint directory neither reads a file
again nor misses one (lines a stopped run logged but did not record are dropped).
"""

from __future__ import annotations

import json
import os
import threading

from flowmagic.runtime.continuous.sources import append_to_log, truncate_log, write_log_count
from flowmagic.runtime.file_source import list_files, read_lines

__all__ = ["FileMonitor"]

_STATE = "files.json"


class FileMonitor:
    """Lists ``paths`` every ``interval_ms`` and logs the lines of new files into ``log_dir``."""

    def __init__(self, paths: list[str], charset: str, interval_ms: int, log_dir: str):
        self.paths, self.charset, self.interval = paths, charset, interval_ms / 1000
        self.log_dir = log_dir
        os.makedirs(log_dir, exist_ok=True)
        state = self._read_state()
        self.count: int = state["count"]
        self.seen: set[str] = set(state["seen"])
        truncate_log(log_dir, self.count)
        write_log_count(log_dir, self.count)
        #: Why listing or reading failed (the job fails with it); ``ended`` is set then.
        self.error: BaseException | None = None
        self.ended = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"flowmagic-files-{paths[0]}", daemon=True)

    def describe(self) -> str:
        return f"FileSource {', '.join(self.paths)}"

    def _read_state(self) -> dict:
        try:
            with open(os.path.join(self.log_dir, _STATE)) as file:
                state: dict = json.load(file)
                return state
        except FileNotFoundError:
            return {"count": 0, "seen": []}

    def _write_state(self) -> None:
        temporary = os.path.join(self.log_dir, f"{_STATE}.tmp")
        with open(temporary, "w") as file:
            json.dump({"count": self.count, "seen": sorted(self.seen)}, file)
        os.replace(temporary, os.path.join(self.log_dir, _STATE))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        try:
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
            count = self.count
            for lines in read_lines(path, self.charset):
                count = append_to_log(self.log_dir, count, lines)
            self.count = count
            self.seen.add(path)
            self._write_state()
            write_log_count(self.log_dir, count)
