"""Where SQL rows go: a SELECT's collect sink, and tables' sinks (``print``, ``blackhole``,
``filesystem`` csv/json). Results travel to the driver as the successful task's output, as
the DataStream sinks' do (:mod:`flowmagic.runtime.connectors.sinks`)."""

from __future__ import annotations

import json
import os
import uuid
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from flowmagic.errors import JobError
from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime import SinkSpec
from flowmagic.runtime.connectors.sinks import CollectSink, Sink
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.result import JobResult
from flowmagic.runtime.sql.operator import KIND_STRINGS
from flowmagic.runtime.sql.values import parse_type, row_string, value_string

if TYPE_CHECKING:
    from flowmagic.runtime.continuous.output import EpochOutput

__all__ = ["TableSink"]


# A SELECT's result is execute_and_collect()'s: its rows, kinds included, to the driver.
register(OperatorKind.SQL_COLLECT_SINK)(CollectSink)


@register(OperatorKind.SQL_SINK)
class TableSink(Sink):
    """A table's sink by its connector: ``print`` (Flink's ``N> +I[1, 1]`` lines), ``blackhole``,
    ``filesystem`` and the discarding end of a streaming file sink.

    A ``filesystem`` sink writes a part file per writing subtask: a bounded job's is committed
    once the job succeeded; a continuous job's writer rolls a part file at each epoch's end
    that wrote rows, and the driver commits it once a checkpoint completes, as the FileSink's
    two-phase commit (:mod:`flowmagic.runtime.continuous.file_commit`). Its name comes from
    the writer's id and part counter, kept in checkpoints, so that a retried epoch writes the
    file its failed attempt wrote under the same final name, and that attempt's in-progress
    file is deleted as an orphan."""

    #: The writer's id and part counter are per old subtask on a restore at another parallelism.
    splits_operator_state = True

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = params.runtime
        assert isinstance(spec, SinkSpec)
        self.spec = spec
        self.options = dict(spec.options)
        self.types = spec.field_types
        connector = spec.connector
        self.write = self._discard
        if connector == "print":
            prefix = self.options.get("print-identifier") or ""
            # BATCH: Flink's adaptive batch scheduler runs a sink whose parallelism is not set at
            # the parallelism its input's volume needs (16 MiB a subtask): one, for what a print
            # sink shows, so its lines have no subtask prefix.
            decided = spec.streaming or "sink.parallelism" in self.options
            if task.parallelism > 1 and decided:
                prefix = f"{prefix}:{task.index + 1}" if prefix else str(task.index + 1)
            self.prefix = f"{prefix}> " if prefix else ""
            self.stderr = self.options.get("standard-error", "false").lower() == "true"
            self.write = self._print
        elif connector == "filesystem":
            self.lines: list[str] = []
            self.format = self.options.get("format", "csv")
            if self.format not in ("csv", "json"):
                raise JobError(f"flowmagic cannot write the '{self.format}' format yet ({spec.table})")
            self.write = self._file
            self.writer_id: str | None = None
            self.counter = 0
        elif connector not in ("blackhole", "discarding"):
            raise JobError(f"flowmagic cannot write tables of connector '{connector}' yet ({spec.table})")

    def _discard(self, values: list[Any]) -> None:
        pass

    def _print(self, values: list[Any]) -> None:
        emit, prefix, stderr, types = self.emit_result, self.prefix, self.stderr, self.types
        zone = self.spec.time_zone
        for row in values:
            emit(("print", stderr, prefix + row_string(KIND_STRINGS[row[-1]], row[:-1], types, zone)))

    def _file(self, values: list[Any]) -> None:
        line = _csv_line if self.format == "csv" else _json_line
        names, types = self.spec.field_names, self.types
        zone = self.spec.time_zone
        self.lines.extend(line(row, names, types, zone) for row in values)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.write([value])

    def process_batch(self, values: list[Any]) -> None:
        self.write(values)

    def _roll(self) -> None:
        if self.spec.connector != "filesystem" or not self.lines:
            return
        base = self.options["path"]
        os.makedirs(base, exist_ok=True)
        task = self.task
        if task.run_id is None:
            final, action = f"part-{uuid.uuid4()}-{task.index}-0", "file"
        else:
            if self.writer_id is None:
                key = f"flowmagic:{task.run_id}:{task.vertex_name}:{task.index}"
                self.writer_id = str(uuid.uuid5(uuid.NAMESPACE_URL, key))
            final, action = f"part-{self.writer_id}-{self.counter}", "commit"
            self.counter += 1
        in_progress = os.path.join(base, f".{final}.inprogress.{uuid.uuid4().hex}")
        with open(in_progress, "w", encoding="utf-8") as file:
            file.write("".join(line + "\n" for line in self.lines))
            if action == "commit":
                # What the checkpoint commits must be on disk when it completes.
                file.flush()
                os.fsync(file.fileno())
        self.lines = []
        self.emit_result((action, in_progress, os.path.join(base, final)))

    def prepare_snapshot(self, checkpoint: bool) -> None:
        self._roll()

    def end_input(self) -> None:
        self._roll()

    def snapshot_operator_state(self) -> Any:
        if self.spec.connector != "filesystem":
            return None
        return {"writer": self.writer_id, "counter": self.counter}

    def restore_operator_state(self, snapshot: Any) -> None:
        if not isinstance(snapshot, dict) or self.spec.connector != "filesystem":
            return
        if self.writer_id is None:
            self.writer_id = snapshot.get("writer")
        if snapshot.get("writer") == self.writer_id:
            self.counter = max(self.counter, int(snapshot.get("counter") or 0))

    @staticmethod
    def deliver(result: JobResult, node_id: int, payload: Any) -> None:
        if payload[0] == "print":
            result.printed.append((payload[1], payload[2]))
        else:
            os.replace(payload[1], payload[2])
            result.committed.append(payload[2])

    @staticmethod
    def deliver_epoch(output: EpochOutput, node_id: int, payload: Any) -> None:
        if payload[0] == "print":
            output.printed.append((payload[1], payload[2]))
        else:
            output.committables.append(payload)


def _csv_value(value: Any, type_text: str, zone: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = value_string(value, type_text, zone)
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv_line(row: Any, names: tuple[str, ...], types: tuple[str, ...], zone: str) -> str:
    return ",".join(_csv_value(v, t, zone) for v, t in zip(row[:-1], types, strict=True))


def _json_value(value: Any, type_text: str, zone: str) -> str:
    """A value as Flink's JSON format writes it: a DECIMAL as a number at its scale, a
    timestamp as its SQL text, others as JSON's."""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, int) and not isinstance(value, bool) and parse_type(type_text).is_timestamp:
        return json.dumps(value_string(value, type_text, zone))
    return json.dumps(value, ensure_ascii=False)


def _json_line(row: Any, names: tuple[str, ...], types: tuple[str, ...], zone: str) -> str:
    fields = (
        f"{json.dumps(n, ensure_ascii=False)}:{_json_value(v, t, zone)}"
        for n, v, t in zip(names, row[:-1], types, strict=True)
    )
    return "{" + ",".join(fields) + "}"
