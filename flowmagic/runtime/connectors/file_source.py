"""Flink's ``FileSource`` with the text line format: files listed, one split per file.

A bounded FileSource's subtask ``i`` reads every ``parallelism``-th file in path order (Flink's
enumerator hands files to whichever reader asks first; this is one order it could produce,
always the same). A monitored one is unbounded: the continuous mode's driver lists the paths
at each discovery interval and logs the lines of new files (see
:mod:`flowmagic.runtime.continuous.sources`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from flowmagic.errors import UnsupportedSourceError
from flowmagic.graph.operator_params import FileSourceParams
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.runtime.connectors.factories import ConnectorSource, TableContext, TableOptions
from flowmagic.runtime.connectors.sources import Source, local_path
from flowmagic.runtime.continuous.feeds import Feed, FeedContext
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.records import BATCH_SIZE
from flowmagic.runtime.registry import register

__all__ = ["FileSourceReader", "estimated_row_count", "list_files", "read_lines"]


def _hidden(name: str) -> bool:
    # Flink's DefaultFileFilter skips these, as Hadoop's readers do.
    return name.startswith((".", "_"))


def list_files(paths: Iterable[str]) -> list[str]:
    """Every visible file under ``paths`` (files, or directories read recursively), in order."""
    files: list[str] = []
    for path in paths:
        local = local_path(path)
        if local is None:
            raise UnsupportedSourceError(
                f"FileSource reads local paths (or file://) only, got {path!r}: read other file systems with "
                "env.read_text_file(path) or from_spark(spark.readStream.text(path))"
            )
        if os.path.isdir(local):
            for root, directories, names in os.walk(local):
                directories[:] = sorted(d for d in directories if not _hidden(d))
                files.extend(os.path.join(root, name) for name in sorted(names) if not _hidden(name))
        elif os.path.isfile(local):
            files.append(local)
        else:
            raise FileNotFoundError(
                f"File {path} does not exist or the user running Flink has insufficient permissions to access it."
            )
    return files


_SAMPLED_LINES = 100


def estimated_row_count(path: str) -> int | None:
    """The rows Flink's csv format reports for the files under ``path``
    (``CsvFormatStatisticsReportUtil``): the files' total size over the average size of their
    first 100 lines (a line's bytes and its line break); None when the files cannot be read."""
    try:
        files = list_files([path])
        total = sum(os.path.getsize(file) for file in files)
        sampled = sampled_size = 0
        for file in files:
            if sampled >= _SAMPLED_LINES:
                break
            with open(file, "rb") as reader:
                for line in reader:
                    sampled += 1
                    sampled_size += len(line.rstrip(b"\r\n")) + 1
                    if sampled >= _SAMPLED_LINES:
                        break
    except (OSError, UnsupportedSourceError):
        return None
    if sampled < _SAMPLED_LINES:
        # Fewer lines than the sample: the whole size is theirs (line breaks of two bytes too).
        sampled_size = total
    if sampled_size == 0:
        return None
    return total * min(_SAMPLED_LINES, sampled) // sampled_size


def read_lines(path: str, charset: str) -> Iterator[list[str]]:
    """The lines of a file in batches, as Java's ``BufferedReader.readLine`` reads them: a line
    ends at ``\\n``, ``\\r`` or ``\\r\\n``, which it does not keep."""
    batch: list[str] = []
    # newline="" splits at exactly those three endings and returns them untranslated.
    with open(path, encoding=charset, newline="") as file:
        for line in file:
            if line.endswith("\r\n"):
                line = line[:-2]
            elif line.endswith(("\n", "\r")):
                line = line[:-1]
            batch.append(line)
            if len(batch) == BATCH_SIZE:
                yield batch
                batch = []
    if batch:
        yield batch


@register(OperatorKind.SOURCE_FILE)
class FileSourceReader(Source):
    """The reader of a bounded FileSource's subtask; a monitored one is fed by the driver's
    :class:`~flowmagic.runtime.continuous.file_monitor.FileMonitor` (the ``filesystem``
    connector's source)."""

    identifier = "filesystem"

    @classmethod
    def open_feed(cls, params: FileSourceParams, context: FeedContext) -> Feed:
        # Below the runtime's sources in the imports: the monitor lists and reads with this module.
        from flowmagic.runtime.continuous.file_monitor import FileMonitorFeed

        assert params.discovery_interval_ms is not None, "a bounded FileSource has no feed"
        return FileMonitorFeed(context, list(params.paths), params.charset, params.discovery_interval_ms)

    @classmethod
    def create_source(cls, table: TableContext) -> ConnectorSource:
        """Flink's ``filesystem`` table source: ``path`` (a file or a directory), ``format``
        (``raw``: each line is a record, ``raw.charset``; ``csv``, ``json``: a row per line),
        and ``source.monitor-interval`` to read the files that appear there for ever. As
        Flink's, it takes a projection and filters."""
        options = TableOptions("filesystem", table, required=("path", "format"), optional=("source.monitor-interval",))
        table_format = options.format(file_system=True)
        charset = options.raw_charset(table_format)
        interval = options.millis("source.monitor-interval")
        path = options.string("path")
        options.validate()
        assert path is not None
        spec = OperatorSpec(
            OperatorKind.SOURCE_FILE,
            FileSourceParams(paths=(path,), charset=charset, discovery_interval_ms=interval),
        )
        return ConnectorSource(
            spec,
            bounded=interval is None,
            format=table_format,
            projection_push_down=True,
            filter_push_down=True,
            row_count=estimated_row_count(path) if interval is None and table_format.identifier == "csv" else None,
        )

    def __init__(self, params: FileSourceParams, task: TaskInfo):
        super().__init__(params, task)
        self.paths, self.charset = params.paths, params.charset
        self.discovery_interval_ms = params.discovery_interval_ms

    def batches(self) -> Iterator[list[Any]]:
        if self.discovery_interval_ms is not None:
            raise UnsupportedSourceError(
                f"{self.task.vertex_name!r} monitors its paths continuously: it runs in the continuous mode only"
            )
        files = list_files(self.paths)
        for file in files[self.task.index :: self.task.parallelism]:
            yield from read_lines(file, self.charset)
