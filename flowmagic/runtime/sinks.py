"""Sink operators: what leaves the job goes back to the driver as task results.

Results travel as the successful Spark task's output, so a retried subtask never delivers
twice: print lines and collected records appear exactly once, and files are committed only
for the attempts whose output the driver received.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

from flowmagic.runtime.context import adapt
from flowmagic.runtime.operators import Operator, TaskInfo, register
from flowmagic.runtime.records import java_string

__all__ = ["CollectSink", "FileSinkCommitter", "FileSinkWriter", "PrintSink", "SinkFunctionOperator"]


class _Sink(Operator):
    emits_results = True
    #: Set by the task: ``emit_result(payload)`` hands a result to the driver.
    emit_result: Callable[[Any], None]


@register("print")
class PrintSink(_Sink):
    """Flink's PrintSinkOutputWriter format: ``[identifier[:]][subtask+1]> record``."""

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        prefix = params.get("identifier") or ""
        if task.parallelism > 1:
            prefix = f"{prefix}:{task.index + 1}" if prefix else str(task.index + 1)
        self.prefix = f"{prefix}> " if prefix else ""
        self.stderr = bool(params.get("stderr"))

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.emit_result((self.stderr, self.prefix + java_string(value)))

    def process_batch(self, values: list[Any]) -> None:
        prefix, stderr, emit = self.prefix, self.stderr, self.emit_result
        for value in values:
            emit((stderr, prefix + java_string(value)))


@register("collect")
class CollectSink(_Sink):
    """``execute_and_collect()``: the records themselves."""

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.emit_result(value)

    def process_batch(self, values: list[Any]) -> None:
        emit = self.emit_result
        for value in values:
            emit(value)


@register("sink_function")
class SinkFunctionOperator(_Sink):
    """``add_sink(function)``: ``function(value)`` or ``function.invoke(value, context)``."""

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        self.user_function = params["function"]
        invoke = getattr(self.user_function, "invoke", None)
        self.invoke = (lambda value: invoke(value, None)) if callable(invoke) else adapt(self.user_function, "invoke")

    def open(self) -> None:
        self.open_function(self.user_function)

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

    def close(self) -> None:
        self.close_function(self.user_function)


@register("sink_writer")
class FileSinkWriter(Operator):
    """Writes this attempt's records to an in-progress file and hands it on as a committable."""

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        self.sink = params["sink"]
        self.encode = self.sink.encoder.encode
        self.file = None
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
        self.file.write(f"{line}\n")

    def end_input(self) -> None:
        self.file.close()
        self.output.collect((self.path, f"part-{self.task.index}"), None)

    def close(self) -> None:
        if self.file is not None and not self.file.closed:
            self.file.close()


@register("sink_committer")
class FileSinkCommitter(_Sink):
    """Passes committables to the driver, which publishes them once the job succeeded."""

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        self.base_path = params["sink"].base_path

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        in_progress, final_name = value
        self.emit_result(("commit", in_progress, os.path.join(self.base_path, final_name)))
