"""Sink operators: what leaves the job goes back to the driver as task results.

Results travel as the successful Spark task's output, so a retried subtask never delivers
twice: print lines and collected records appear exactly once, and files are committed only
for the attempts whose output the driver received.
"""

from __future__ import annotations

import os
import shutil
import uuid
from typing import Any, TextIO

from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.context import adapt
from flowmagic.runtime.operator import Operator, TaskInfo
from flowmagic.runtime.records import java_string
from flowmagic.runtime.registry import register
from flowmagic.runtime.result import JobResult

__all__ = ["CollectSink", "FileSinkCommitter", "FileSinkWriter", "PrintSink", "SinkFunctionOperator"]


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

    @staticmethod
    def deliver(result: JobResult, node_id: int, payload: Any) -> None:
        result.printed.append(payload)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.emit_result((self.stderr, self.prefix + java_string(value)))

    def process_batch(self, values: list[Any]) -> None:
        prefix, stderr, emit = self.prefix, self.stderr, self.emit_result
        for value in values:
            emit((stderr, prefix + java_string(value)))


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
        self.path = ""

    def open(self) -> None:
        directory = os.path.join(self.sink.base_path, ".in-progress")
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(directory, f"part-{self.task.index}-attempt{self.task.attempt}-{uuid.uuid4().hex[:8]}")
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
        self.output.collect((self.path, f"part-{self.task.index}"), None)

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

    @staticmethod
    def finish_delivery(result: JobResult) -> None:
        for directory in {os.path.dirname(path) for path in result.committed}:
            shutil.rmtree(os.path.join(directory, ".in-progress"), ignore_errors=True)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        in_progress, final_name = value
        self.emit_result(("commit", in_progress, os.path.join(self.base_path, final_name)))
