"""Flink's FileSink at run time: writers roll part files, the driver commits them.

Part files are named as Flink's FileSink names them: a writer draws an id and writes, in
each bucket (a directory under the base path, by default the processing hour),
``.part-<id>-<n>.inprogress.<uuid>`` (hidden, so that readers skip it; ``part`` and a
suffix come from the OutputFileConfig); when its rolling policy rolls the file, the file
becomes a committable that the committer hands to the driver, which renames it to
``part-<id>-<n>`` once it is safe:

- a bounded job commits every file once the job succeeded (its writers roll at the end of
  their input), so a retried subtask's files never show, and the in-progress files of
  failed or killed attempts are deleted when it ends (:class:`InProgressFiles`);
- a continuous job commits the files rolled up to a checkpoint once the checkpoint's
  manifest is written (Flink's two-phase commit: ``notifyCheckpointComplete``). The open
  part file is the writer's operator state: it is flushed to disk at each epoch's end and
  its length recorded, and a restored writer truncates it to that length and goes on
  writing it, so records of an epoch that failed are written once, by its retry
  (:mod:`flowmagic.runtime.continuous.file_commit` does the driver's side).
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from flowmagic.errors import JobError
from flowmagic.graph.operator_params import SinkParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.connectors.factories import ConnectorSink, TableContext, TableOptions
from flowmagic.runtime.connectors.sinks import Sink
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.records import java_to_string
from flowmagic.runtime.registry import implementation, register
from flowmagic.runtime.result import JobResult
from flowmagic.vocabulary.rolling_policy import PartFileInfo

if TYPE_CHECKING:
    from flowmagic.runtime.continuous.output import EpochOutput

__all__ = ["FileSinkCommitter", "FileSinkWriter", "InProgressFiles", "commit_part", "writer_of"]

# ``.<prefix>-<writer id>-<n><suffix>.inprogress.<uuid>``.
_IN_PROGRESS = re.compile(
    r"\.(?P<part>.*?-(?P<writer>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-\d+.*)"
    r"\.inprogress\.[0-9a-f]{32}"
)


def writer_of(in_progress_name: str) -> str | None:
    """The writer id in an in-progress file's name (None: not a FileSink's in-progress file)."""
    match = _IN_PROGRESS.fullmatch(in_progress_name)
    return match["writer"] if match else None


def commit_part(in_progress: str, final: str) -> None:
    """Publish a rolled part file; committing again what was committed changes nothing (a
    restored job re-commits the committables of its last checkpoint)."""
    if os.path.exists(in_progress):
        os.replace(in_progress, final)
    elif not os.path.exists(final):
        # Flink's words when a recovered committable's file is gone.
        raise JobError(
            f"Committing during recovery failed: Could not access status of source file {in_progress} "
            f"(nor is {final} there)."
        )


@dataclass
class _PartFile:
    """A bucket's open part file."""

    in_progress: str
    name: str
    size: int
    created: int
    updated: int

    def info(self) -> PartFileInfo:
        return PartFileInfo(self.size, self.created, self.updated)


@dataclass
class _Bucket:
    """One bucket (directory under the base path) of a writer: its part counter and open part."""

    relative: str
    counter: int = 0
    part: _PartFile | None = None
    file: BinaryIO | None = None


@register(OperatorKind.SINK_WRITER)
class FileSinkWriter(Operator):
    """Writes records to an open part file per bucket, rolls them as the rolling policy says,
    and hands the rolled files on as committables (in a continuous job, also the open ones'
    paths, so that the driver knows they are in use). The ``filesystem`` connector's sink."""

    splits_operator_state = True
    identifier = "filesystem"

    @classmethod
    def create_sink(cls, table: TableContext) -> ConnectorSink:
        """Flink's ``filesystem`` table sink: ``path`` (the base path) and ``format``
        (``raw``: each record's text is a line, ``raw.charset``; ``csv``, ``json``: a row
        per line), with FileSink's defaults."""
        options = TableOptions("filesystem", table, required=("path", "format"))
        table_format = options.format(file_system=True)
        charset = options.raw_charset(table_format)
        path = options.string("path")
        options.validate()
        # Its formats (raw, csv, json) write rows, not changes: inserts only, as Flink's.
        return ConnectorSink(file_base_path=path, charset=charset, format=table_format, changelog_mode=("I",))

    def __init__(self, name: str, params: SinkParams, task: TaskInfo):
        super().__init__(name, params, task)
        sink = params.sink
        self.base_path: str = sink.base_path
        self.type_info = params.type_info
        self.charset: str = sink.encoder.charset
        self.assigner = sink.bucket_assigner
        self.names = sink.output_file_config
        self.policy = sink.rolling_policy
        self.check_interval: int = sink.bucket_check_interval
        self.writer_id: str | None = None
        self.buckets: dict[str, _Bucket] = {}
        self.rolled: list[tuple[str, str]] = []
        self.next_check = 0

    def open(self) -> None:
        os.makedirs(self.base_path, exist_ok=True)
        self.next_check = self.task.clock.now() + self.check_interval

    def _new_writer_id(self, now: int) -> str:
        run_id = self.task.run_id
        if run_id is None:
            return str(uuid.uuid4())
        # A retried epoch restores the writer as it was, and a fresh writer's retry must
        # draw the same id, so that the driver knows the failed attempt's files as its own.
        task = self.task
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"flowmagic:{run_id}:{task.vertex_name}:{task.index}:{now}"))

    def _bucket(self, relative: str) -> _Bucket:
        if relative not in self.buckets:
            self.buckets[relative] = _Bucket(relative)
        return self.buckets[relative]

    def _roll(self, bucket: _Bucket, now: int) -> tuple[_PartFile, BinaryIO]:
        self._close_part(bucket)
        if self.writer_id is None:
            self.writer_id = self._new_writer_id(now)
        name = f"{self.names.part_prefix}-{self.writer_id}-{bucket.counter}{self.names.part_suffix}"
        bucket.counter += 1
        directory = os.path.join(self.base_path, bucket.relative)
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, f".{name}.inprogress.{uuid.uuid4().hex}")
        bucket.file = open(path, "wb")  # noqa: SIM115 - closed when the part rolls, or in close()
        bucket.part = _PartFile(path, os.path.join(bucket.relative, name), 0, now, now)
        return bucket.part, bucket.file

    def _close_part(self, bucket: _Bucket) -> None:
        if bucket.part is not None and bucket.file is not None:
            bucket.file.close()
            self.rolled.append((bucket.part.in_progress, bucket.part.name))
        bucket.part = bucket.file = None

    def _write(self, values: Iterable[Any]) -> None:
        now = self.task.clock.now()
        # Records are bucketed by the processing time they are written at: one time per batch.
        bucket = self._bucket(self.assigner.bucket_id(now))
        part, file = bucket.part, bucket.file
        policy, type_info, charset = self.policy, self.type_info, self.charset
        value = None
        try:
            for value in values:
                data = (java_to_string(value, type_info) + "\n").encode(charset)
                if part is None or file is None or policy.should_roll_on_event(part.info()):
                    part, file = self._roll(bucket, now)
                file.write(data)
                part.size += len(data)
        except Exception as error:
            raise self.fail(error, value) from error
        if part is not None:
            part.updated = now

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self._write((value,))

    def process_batch(self, values: list[Any]) -> None:
        self._write(values)

    def _hand_on(self) -> None:
        for committable in self.rolled:
            self.output.collect(committable, None)
        self.rolled.clear()

    def _open_buckets(self) -> list[_Bucket]:
        return [bucket for bucket in self.buckets.values() if bucket.part is not None]

    def advance_processing_time(self, now: int) -> None:
        if now < self.next_check:
            return
        self.next_check = now + self.check_interval
        for bucket in self._open_buckets():
            assert bucket.part is not None, "an open bucket has a part"
            if self.policy.should_roll_on_processing_time(bucket.part.info(), now):
                self._close_part(bucket)

    def next_processing_timer(self) -> int | None:
        return self.next_check if self._open_buckets() else None

    def prepare_snapshot(self, checkpoint: bool) -> None:
        for bucket in self._open_buckets():
            part, file = bucket.part, bucket.file
            assert part is not None and file is not None, "an open bucket has a part"
            if checkpoint and self.policy.should_roll_on_checkpoint(part.info()):
                self._close_part(bucket)
            else:
                # What the snapshot records as written must be on disk when it completes.
                file.flush()
                os.fsync(file.fileno())
                self.output.collect((part.in_progress, None), None)
        self._hand_on()

    def end_input(self) -> None:
        for bucket in self.buckets.values():
            self._close_part(bucket)
        self._hand_on()

    def snapshot_operator_state(self) -> Any:
        buckets = {}
        for relative, bucket in self.buckets.items():
            part = bucket.part
            state = None if part is None else (part.in_progress, part.name, part.size, part.created, part.updated)
            buckets[relative] = {"counter": bucket.counter, "part": state}
        return {"writer": self.writer_id, "buckets": buckets}

    def restore_operator_state(self, snapshot: Any) -> None:
        if self.writer_id is None:
            self.writer_id = snapshot["writer"]
        for relative, state in snapshot["buckets"].items():
            bucket = self._bucket(relative)
            bucket.counter = max(bucket.counter, state["counter"])
            if state["part"] is not None:
                self._restore_part(bucket, state["part"], own=snapshot["writer"] == self.writer_id)

    def _restore_part(self, bucket: _Bucket, part: tuple[str, str, int, int, int], *, own: bool) -> None:
        path, name, size, created, updated = part
        try:
            with open(path, "r+b") as file:
                file.seek(0, os.SEEK_END)
                if file.tell() < size:
                    raise OSError(f"it holds {file.tell()} bytes, the checkpoint recorded {size}")
                # What a failed attempt wrote after the checkpoint is written again by its retry.
                file.truncate(size)
        except OSError as error:
            raise self.fail(
                JobError(f"Cannot resume the in-progress file {path} of the restored FileSink writer: {error}"),
                has_record=False,
            ) from error
        if bucket.part is None and own:
            bucket.part = _PartFile(path, name, size, created, updated)
            bucket.file = open(path, "ab")  # noqa: SIM115 - closed when the part rolls, or in close()
        else:
            # Another old subtask's open file (the parallelism shrank): closed, and committed
            # with the next checkpoint, as Flink merges a restored bucket's state.
            self.rolled.append((path, name))

    def close(self) -> None:
        for bucket in self.buckets.values():
            if bucket.file is not None and not bucket.file.closed:
                bucket.file.close()


@register(OperatorKind.SINK_COMMITTER)
class FileSinkCommitter(Sink):
    """Passes committables to the driver, which publishes them once it is safe."""

    def __init__(self, name: str, params: SinkParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.base_path = params.sink.base_path

    @staticmethod
    def deliver(result: JobResult, node_id: int, payload: Any) -> None:
        _action, in_progress, final = payload
        commit_part(in_progress, final)
        result.committed.append(final)

    @staticmethod
    def deliver_epoch(output: EpochOutput, node_id: int, payload: Any) -> None:
        output.committables.append(payload)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        in_progress, final_name = value
        if final_name is None:
            self.emit_result(("open", in_progress, None))
        else:
            self.emit_result(("commit", in_progress, os.path.join(self.base_path, final_name)))


class InProgressFiles:
    """The in-progress files that a bounded job's file sinks leave behind, for the driver to
    delete.

    Made before the job runs, it notes the in-progress files already there (another job may
    be writing them); :meth:`discard_new` deletes those that appeared since.
    """

    def __init__(self, nodes: Iterable[Any]):
        self.directories = sink_directories(nodes)
        self.before = self._list()

    def _list(self) -> set[str]:
        # Part files lie in bucket directories below the base paths.
        found: set[str] = set()
        for directory in self.directories:
            for parent, _dirs, names in os.walk(directory):
                found.update(os.path.join(parent, n) for n in names if writer_of(n) is not None)
        return found

    def discard_new(self) -> None:
        """Delete the in-progress files that appeared since this object was made."""
        for path in self._list() - self.before:
            with contextlib.suppress(OSError):
                os.remove(path)


def sink_directories(nodes: Iterable[Any]) -> list[str]:
    """The base paths of the file sinks among a job's stream nodes."""
    return sorted(
        {
            node.operator.params.sink.base_path
            for node in nodes
            if node.operator is not None
            and implementation(node.operator.kind) is FileSinkWriter
            and isinstance(node.operator.params, SinkParams)
        }
    )
