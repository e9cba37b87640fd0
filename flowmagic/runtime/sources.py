"""Sources: each subtask produces its own share of the input, as Flink's split readers do.

A source yields *batches* of records (lists) so that the chain behind it can use its fast
path; records carry no timestamps. Each source class registers its kind.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

from flowmagic.errors import UnsupportedSourceError
from flowmagic.graph.operator_params import (
    CollectionSourceParams,
    DatagenSourceParams,
    FileMonitorSourceParams,
    FileSplitReaderParams,
    SequenceSourceParams,
    SourceParams,
)
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.operator import Operator, TaskInfo
from flowmagic.runtime.records import BATCH_SIZE
from flowmagic.runtime.registry import register

__all__ = ["Source", "chunks", "generate", "local_path", "split_file"]

# Small enough that splits spread evenly over the readers, large enough to read efficiently.
SPLIT_SIZE = 4 << 20
_READ_BLOCK = 1 << 20


class Source:
    """Produces the records of one source subtask."""

    #: A source hands nothing to the driver and is never pre-aggregated into.
    emits_results = False
    combinable = False

    def __init__(self, params: SourceParams, task: TaskInfo):
        self.task = task

    def batches(self) -> Iterator[list[Any]]:
        raise NotImplementedError


def _share(total: int, index: int, parallelism: int) -> range:
    """Contiguous share ``index`` of ``range(total)``, as Flink splits sequences."""
    return range(total * index // parallelism, total * (index + 1) // parallelism)


def chunks(values: Any) -> Iterator[list[Any]]:
    """``values`` in lists of at most ``BATCH_SIZE``."""
    chunk: list[Any] = []
    for value in values:
        chunk.append(value)
        if len(chunk) == BATCH_SIZE:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@register(OperatorKind.SOURCE_COLLECTION)
class CollectionSource(Source):
    def __init__(self, params: CollectionSourceParams, task: TaskInfo):
        super().__init__(params, task)
        self.data = params.data

    def batches(self) -> Iterator[list[Any]]:
        data = self.data
        share = _share(len(data), self.task.index, self.task.parallelism)
        yield from chunks(data[share.start : share.stop])


@register(OperatorKind.SOURCE_SEQUENCE)
class SequenceSource(Source):
    def __init__(self, params: SequenceSourceParams, task: TaskInfo):
        super().__init__(params, task)
        self.start, self.end = params.start, params.end

    def batches(self) -> Iterator[list[Any]]:
        start, end = self.start, self.end
        share = _share(end - start + 1, self.task.index, self.task.parallelism)
        for first in range(share.start, share.stop, BATCH_SIZE):
            yield list(range(start + first, start + min(first + BATCH_SIZE, share.stop)))


def generate(params: DatagenSourceParams, index: int) -> Any:
    """Record ``index`` of a data generator: ``generator(index)``, or ``generator(index, rng)``
    with an ``rng`` seeded by the seed and the index, so it is the same on every run."""
    generator = params.generator
    if generator is None:
        return index
    if params.arity >= 2:
        return generator(index, random.Random(f"{params.seed}:{index}"))
    return generator(index)


@register(OperatorKind.SOURCE_DATAGEN)
class DatagenSource(Source):
    def __init__(self, params: DatagenSourceParams, task: TaskInfo):
        super().__init__(params, task)
        self.params = params

    def batches(self) -> Iterator[list[Any]]:
        count = self.params.count
        if count is None:
            raise UnsupportedSourceError("unbounded data generator")
        rate = self.params.rows_per_second
        share = _share(count, self.task.index, self.task.parallelism)
        per_subtask_rate = rate / self.task.parallelism if rate else None
        started = time.monotonic()
        batch: list[Any] = []
        for produced, index in enumerate(share):
            batch.append(generate(self.params, index))
            if per_subtask_rate:
                ahead = (produced + 1) / per_subtask_rate - (time.monotonic() - started)
                if ahead > 0:
                    yield batch
                    batch = []
                    time.sleep(ahead)
            if len(batch) >= BATCH_SIZE:
                yield batch
                batch = []
        if batch:
            yield batch


class _EpochSource(Source):
    """An unbounded source: it has no records of its own to read; the continuous mode hands
    each epoch's records to its subtasks."""

    def batches(self) -> Iterator[list[Any]]:
        raise UnsupportedSourceError(f"{self.task.vertex_name!r} is unbounded: it runs in the continuous mode only")


@register(OperatorKind.SOURCE_SOCKET)
class SocketSource(_EpochSource):
    """``socket_text_stream``: lines a reader on the driver logged, epoch by epoch."""


@register(OperatorKind.SOURCE_SPARK)
class SparkSource(_EpochSource):
    """``from_spark``: the rows of a Spark streaming DataFrame's micro-batches, epoch by epoch."""


def local_path(path: str) -> str | None:
    """The local file system path of ``path`` (plain or ``file://``), else None."""
    parsed = urlparse(path)
    if parsed.scheme in ("", "file"):
        return parsed.path if parsed.scheme else path
    if len(parsed.scheme) == 1:  # a Windows drive letter
        return path
    return None


def split_file(path: str) -> list[tuple[str, int, int]]:
    """Splits ``(file, start, end)`` of a file or of every visible file under a directory."""
    files: list[str] = []
    if os.path.isdir(path):
        for root, directories, names in os.walk(path):
            directories[:] = sorted(d for d in directories if not d.startswith((".", "_")))
            files.extend(os.path.join(root, n) for n in sorted(names) if not n.startswith((".", "_")))
    elif os.path.exists(path):
        files.append(path)
    else:
        raise FileNotFoundError(f"The provided file path {path} does not exist.")
    splits = []
    for file in files:
        size = os.path.getsize(file)
        for start in range(0, max(size, 1), SPLIT_SIZE):
            splits.append((file, start, min(start + SPLIT_SIZE, size)))
    return splits


@register(OperatorKind.SOURCE_FILE_MONITOR)
class FileMonitorSource(Source):
    """Flink 1.x's ContinuousFileMonitoringFunction (PROCESS_ONCE): lists the splits."""

    def __init__(self, params: FileMonitorSourceParams, task: TaskInfo):
        super().__init__(params, task)
        self.path = params.path

    def batches(self) -> Iterator[list[Any]]:
        local = local_path(self.path)
        # Remote file systems are read by Spark's Hadoop reader straight into the split readers.
        if local is not None:
            yield split_file(local)


@register(OperatorKind.FILE_SPLIT_READER)
class FileSplitReader(Operator):
    """Reads the lines of each split it is sent (Hadoop's rule: a split owns the lines that
    start inside it; the first split also owns the first line)."""

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.process_batch([value])

    def __init__(self, name: str, params: FileSplitReaderParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.charset = params.charset

    def read_split(self, split: tuple[str, int, int]) -> Iterator[list[str]]:
        """The lines of ``split``, in batches."""
        path, start, end = split
        encoding = self.charset
        with open(path, "rb") as file:
            if start > 0:
                file.seek(start - 1)
                if file.read(1) != b"\n":
                    file.readline()
            position = file.tell()
            while position < end:
                # Whole lines only: read up to the split's end (or a block), then finish the line.
                block = file.read(min(_READ_BLOCK, end - position))
                if not block:
                    break
                if not block.endswith(b"\n"):
                    block += file.readline()
                position += len(block)
                text = block.decode(encoding)
                lines = text.split("\n")
                if text.endswith("\n"):
                    lines.pop()
                if "\r" in text:
                    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
                for first in range(0, len(lines), BATCH_SIZE):
                    yield lines[first : first + BATCH_SIZE]

    def process_batch_in_steps(self, values: list[Any]) -> Iterator[None]:
        if values and isinstance(values[0], str):  # lines from Spark's Hadoop reader
            self.output.collect_batch(values)
            return
        collect_batch = self.output.collect_batch
        for split in values:
            for lines in self.read_split(split):
                collect_batch(lines)
                yield

    def process_batch(self, values: list[Any]) -> None:
        for _step in self.process_batch_in_steps(values):
            pass
