"""Sink operators: what leaves the job goes back to the driver as task results.

Results travel as the successful Spark task's output, so a retried subtask never delivers
twice: print lines and collected records appear exactly once, and files are committed only
for the attempts whose output the driver received (the FileSink is in
:mod:`flowmagic.runtime.connectors.file_sink`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from flowmagic.graph.operator_params import FunctionParams, PrintParams
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.runtime.connectors.factories import ConnectorSink, TableContext, TableOptions
from flowmagic.runtime.operators.context import adapt
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.records import java_string, printed_string
from flowmagic.runtime.registry import register
from flowmagic.runtime.result import JobResult

if TYPE_CHECKING:
    from flowmagic.runtime.continuous.output import EpochOutput

__all__ = ["BlackholeSink", "CollectSink", "PrintSink", "Sink", "SinkFunctionOperator"]


class Sink(Operator):
    """An operator whose output goes to the driver, which delivers it into the job's result."""

    emits_results = True
    #: The connector's identifier, by which tables name it (None: not a connector).
    identifier: ClassVar[str | None] = None

    @staticmethod
    def deliver(result: JobResult, node_id: int, payload: Any) -> None:
        """On the driver, after the job succeeded: take one ``payload`` of sink ``node_id``
        into ``result``."""
        result.results.setdefault(node_id, []).append(payload)

    @staticmethod
    def finish_delivery(result: JobResult) -> None:
        """On the driver, after every payload was delivered."""

    @staticmethod
    def deliver_epoch(output: EpochOutput, node_id: int, payload: Any) -> None:
        """On the driver, in the continuous mode: take one ``payload`` of sink ``node_id``
        into what its epoch made, handed on once the epoch completed."""
        output.collected.setdefault(node_id, []).append(payload)

    @classmethod
    def deliver_epoch_all(cls, output: EpochOutput, node_id: int, payloads: list[Any]) -> None:
        """As :meth:`deliver_epoch`, for each of ``payloads`` in turn (one subtask's, in the
        order it made them)."""
        deliver = cls.deliver_epoch
        for payload in payloads:
            deliver(output, node_id, payload)


@register(OperatorKind.PRINT)
class PrintSink(Sink):
    """Flink's PrintSinkOutputWriter format: ``[identifier[:]][subtask+1]> record`` (and
    Flink's ``print`` connector)."""

    identifier = "print"

    def __init__(self, name: str, params: PrintParams, task: TaskInfo):
        super().__init__(name, params, task)
        prefix = params.identifier or ""
        if task.parallelism > 1:
            prefix = f"{prefix}:{task.index + 1}" if prefix else str(task.index + 1)
        self.prefix = f"{prefix}> " if prefix else ""
        self.stderr = params.stderr
        self.type_info = params.type_info

    @staticmethod
    def deliver(result: JobResult, node_id: int, payload: Any) -> None:
        result.printed.append(payload)

    @staticmethod
    def deliver_epoch(output: EpochOutput, node_id: int, payload: Any) -> None:
        output.printed.append(payload)

    @classmethod
    def deliver_epoch_all(cls, output: EpochOutput, node_id: int, payloads: list[Any]) -> None:
        output.printed.extend(payloads)

    @classmethod
    def create_sink(cls, table: TableContext) -> ConnectorSink:
        """Flink's ``print`` table: ``print-identifier``, ``standard-error``, ``sink.parallelism``."""
        options = TableOptions("print", table, optional=("print-identifier", "standard-error", "sink.parallelism"))
        params = PrintParams(
            identifier=options.string("print-identifier"),
            stderr=options.boolean("standard-error", False),
            type_info=None,
        )
        parallelism = options.integer("sink.parallelism")
        options.validate()
        return ConnectorSink(OperatorSpec(OperatorKind.PRINT, params), parallelism=parallelism)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.emit_result((self.stderr, self.prefix + printed_string(value, self.type_info)))

    def process_batch(self, values: list[Any]) -> None:
        prefix, stderr, type_info = self.prefix, self.stderr, self.type_info
        if type_info is None:
            self.emit_results([(stderr, prefix + java_string(value)) for value in values])
        else:
            self.emit_results([(stderr, prefix + printed_string(value, type_info)) for value in values])


@register(OperatorKind.COLLECT)
class CollectSink(Sink):
    """``execute_and_collect()``: the records themselves."""

    @classmethod
    def deliver_epoch_all(cls, output: EpochOutput, node_id: int, payloads: list[Any]) -> None:
        output.collected.setdefault(node_id, []).extend(payloads)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.emit_result(value)

    def process_batch(self, values: list[Any]) -> None:
        self.emit_results(list(values))


@register(OperatorKind.SINK_FUNCTION)
class SinkFunctionOperator(Sink):
    """``add_sink(function)``: ``function(value)`` or ``function.invoke(value, context)``."""

    def __init__(self, name: str, params: FunctionParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.user_function = params.function
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


@register(OperatorKind.BLACKHOLE)
class BlackholeSink(Operator):
    """Flink's ``blackhole`` connector: a sink that swallows every record."""

    identifier = "blackhole"

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        pass

    def process_batch(self, values: list[Any]) -> None:
        pass

    @classmethod
    def create_sink(cls, table: TableContext) -> ConnectorSink:
        """Flink's ``blackhole`` table (no options)."""
        TableOptions("blackhole", table).validate()
        # Every kind the query makes but UPDATE_BEFORE: nothing is written, the new row will do.
        return ConnectorSink(OperatorSpec(OperatorKind.BLACKHOLE), changelog_mode=("I", "UA", "D"))
