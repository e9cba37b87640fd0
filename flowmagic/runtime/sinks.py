"""Sink operators: what leaves the job goes back to the driver as task results.

Results travel as the successful Spark task's output, so a retried subtask never delivers
twice: print lines and collected records appear exactly once, and files are committed only
for the attempts whose output the driver received.

File sink output is named as Flink's FileSink names it: every writer (subtask attempt) draws
a unique id, writes ``.part-<id>-0.inprogress.<uuid>`` (hidden, so that readers skip it) and
the driver renames it to ``part-<id>-0`` once the job succeeded. A run therefore never
overwrites nor mixes with the files of an earlier run in the same directory, and the
in-progress files a run leaves (failed or killed attempts, or all of them when the job
fails) are deleted when it ends.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import uuid
from collections.abc import Iterable
from typing import Any, TextIO

from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.context import adapt
from flowmagic.runtime.operator import Operator, TaskInfo
from flowmagic.runtime.records import printed_string
from flowmagic.runtime.registry import implementation, register
from flowmagic.runtime.result import JobResult

__all__ = [
    "CollectSink",
    "FileSinkCommitter",
    "FileSinkWriter",
    "InProgressFiles",
    "PrintSink",
    "SinkFunctionOperator",
]

_IN_PROGRESS = re.compile(r"\..+\.inprogress\.[0-9a-f]{32}")


class _Sink(Operator):
    emits_results = True

    @staticmethod
    def deliver(result: JobResult, node_id: int, payload: Any) -> None:
        """On the driver, after the job succeeded: take one ``payload`` of sink ``node_id``
        into ``result``."""
        result.results.setdefault(node_id, []).append(payload)

    @staticmethod
    def finish_delivery(result: JobResult) -> None:
        """On the driver, after every payload was delivered."""


@register(OperatorKind.PRINT)
class PrintSink(_Sink):
    """Flink's PrintSinkOutputWriter format: ``[identifier[:]][subtask+1]> record``."""

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        prefix = params.get("identifier") or ""
        if task.parallelism > 1:
            prefix = f"{prefix}:{task.index + 1}" if prefix else str(task.index + 1)
        self.prefix = f"{prefix}> " if prefix else ""
        self.stderr = bool(params.get("stderr"))
        self.type_info = params.get("type_info")

    @staticmethod
    def deliver(result: JobResult, node_id: int, payload: Any) -> None:
        result.printed.append(payload)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.emit_result((self.stderr, self.prefix + printed_string(value, self.type_info)))

    def process_batch(self, values: list[Any]) -> None:
        prefix, stderr, emit, type_info = self.prefix, self.stderr, self.emit_result, self.type_info
        for value in values:
            emit((stderr, prefix + printed_string(value, type_info)))


@register(OperatorKind.COLLECT)
class CollectSink(_Sink):
    """``execute_and_collect()``: the records themselves."""

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.emit_result(value)

    def process_batch(self, values: list[Any]) -> None:
        emit = self.emit_result
        for value in values:
            emit(value)


@register(OperatorKind.SINK_FUNCTION)
class SinkFunctionOperator(_Sink):
    """``add_sink(function)``: ``function(value)`` or ``function.invoke(value, context)``."""

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        self.user_function = params["function"]
        self.user_functions = (self.user_function,)
        invoke = getattr(self.user_function, "invoke", None)
        self.invoke = (lambda value: invoke(value, None)) if callable(invoke) else adapt(self.user_function, "invoke")

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            self.invoke(value)
        except Exception as error:
            raise self.fail(error, value) from error

    def process_batch(self, values: list[Any]) -> None:
        invoke = self.invoke
        value = None
        try:
            for value in values:
                invoke(value)
        except Exception as error:
            raise self.fail(error, value) from error


@register(OperatorKind.SINK_WRITER)
class FileSinkWriter(Operator):
    """Writes this attempt's records to an in-progress file and hands it on as a committable."""

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        self.sink = params["sink"]
        self.encode = self.sink.encoder.encode
        self.file: TextIO | None = None
        self.part = ""
        self.path = ""

    def open(self) -> None:
        os.makedirs(self.sink.base_path, exist_ok=True)
        self.part = f"part-{uuid.uuid4()}-0"
        self.path = os.path.join(self.sink.base_path, f".{self.part}.inprogress.{uuid.uuid4().hex}")
        self.file = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed in end_input/close

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            line = self.encode(value)
        except Exception as error:
            raise self.fail(error, value) from error
        assert self.file is not None, "records arrive between open() and end_input()"
        self.file.write(f"{line}\n")

    def end_input(self) -> None:
        assert self.file is not None, "end_input() follows open()"
        self.file.close()
        self.output.collect((self.path, self.part), None)

    def close(self) -> None:
        if self.file is not None and not self.file.closed:
            self.file.close()


@register(OperatorKind.SINK_COMMITTER)
class FileSinkCommitter(_Sink):
    """Passes committables to the driver, which publishes them once the job succeeded."""

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        self.base_path = params["sink"].base_path

    @staticmethod
    def deliver(result: JobResult, node_id: int, payload: Any) -> None:
        _action, in_progress, final = payload
        shutil.move(in_progress, final)
        result.committed.append(final)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        in_progress, final_name = value
        self.emit_result(("commit", in_progress, os.path.join(self.base_path, final_name)))


class InProgressFiles:
    """The in-progress files that a job's file sinks leave behind, for the driver to delete.

    Made before the job runs, it notes the in-progress files already there (another job may
    be writing them); :meth:`discard_new` deletes those that appeared since.
    """

    def __init__(self, nodes: Iterable[Any]):
        self.directories = sorted(
            {
                node.operator.params["sink"].base_path
                for node in nodes
                if node.operator is not None and implementation(node.operator.kind) is FileSinkWriter
            }
        )
        self.before = self._list()

    def _list(self) -> set[str]:
        found: set[str] = set()
        for directory in self.directories:
            with contextlib.suppress(OSError):
                found.update(os.path.join(directory, n) for n in os.listdir(directory) if _IN_PROGRESS.fullmatch(n))
        return found

    def discard_new(self) -> None:
        """Delete the in-progress files that appeared since this object was made."""
        for path in self._list() - self.before:
            with contextlib.suppress(OSError):
                os.remove(path)
