"""Flink's InputConversionOperator: a DataStream's records become the rows of the table made
from it (``from_data_stream``, ``create_temporary_view(name, stream)``), in Flink's words
where a record cannot."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmagic.errors import JobError
from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime import InputConversionSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.records import MAX_WATERMARK
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.operator import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, SqlOperator
from flowmagic.vocabulary.types import Row, RowKind

__all__ = ["DropUpdateBefore", "InputConversion"]

_NO_TIMESTAMP = (
    "Could not find timestamp in DataStream API record. Make sure that timestamps have been assigned before "
    "and the event-time characteristic is enabled."
)
_KIND_INDEX = {
    RowKind.INSERT: INSERT,
    RowKind.UPDATE_BEFORE: UPDATE_BEFORE,
    RowKind.UPDATE_AFTER: UPDATE_AFTER,
    RowKind.DELETE: DELETE,
}
#: Java's names of the row kinds, as Flink's message names a record's kind.
_JAVA_KINDS = {
    RowKind.UPDATE_BEFORE: "UPDATE_BEFORE",
    RowKind.UPDATE_AFTER: "UPDATE_AFTER",
    RowKind.DELETE: "DELETE",
}


def _converter(spec: InputConversionSpec) -> Callable[[Any], tuple[Any, ...] | None]:
    """A record into its row (values, then the kind); None: a null record, which Flink skips."""
    if spec.record == "atomic":
        return lambda record: (record, INSERT)
    positions = spec.positions
    arity = len(positions)
    identity = positions == tuple(range(arity))
    insert_only = spec.insert_only

    def convert(record: Any) -> tuple[Any, ...] | None:
        if record is None:
            return None
        kind_index = INSERT
        if isinstance(record, Row):
            kind = record.get_row_kind()
            if not insert_only:
                kind_index = _KIND_INDEX[kind]
            elif kind is not RowKind.INSERT:
                raise JobError(
                    "Error during input conversion. Conversion expects insert-only records but DataStream API "
                    f"record contains: {_JAVA_KINDS[kind]}"
                )
        if not isinstance(record, tuple | list | Row) or len(record) < arity:
            raise JobError(
                "Error during input conversion from external DataStream API to internal Table API data "
                "structures. Make sure that the provided data types that configure the converters are correctly "
                f"declared in the schema. Affected record:\n{record!r}"
            )
        if identity and len(record) == arity:
            return (*record, kind_index)
        return (*(record[p] for p in positions), kind_index)

    return convert


@register(OperatorKind.SQL_DROP_UPDATE_BEFORE)
class DropUpdateBefore(SqlOperator):
    """Flink's DropUpdateBefore over a changelog stream's table: its UPDATE_BEFORE rows left out."""

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        if value[-1] != UPDATE_BEFORE:
            self.output.collect(value, timestamp)

    def process_batch(self, values: list[Any]) -> None:
        kept = [value for value in values if value[-1] != UPDATE_BEFORE]
        if kept:
            self.output.collect_batch(kept)


@register(OperatorKind.SQL_INPUT_CONVERSION)
class InputConversion(SqlOperator):
    """Each record as a row of the table; the record's timestamp appended when the table has a
    ``rowtime`` metadata column; the stream's watermarks passed on for ``SOURCE_WATERMARK()``
    only (the final watermark always, so that a bounded stream's windows close)."""

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        assert isinstance(self.spec, InputConversionSpec)
        self.convert = _converter(self.spec)
        self.rowtime = self.spec.rowtime
        self.propagate_watermark = self.spec.propagate_watermark

    def _row(self, value: Any, timestamp: int | None) -> tuple[Any, ...] | None:
        try:
            row = self.convert(value)
            if row is not None and self.rowtime:
                if timestamp is None:
                    raise JobError(_NO_TIMESTAMP)
                row = (*row[:-1], timestamp, row[-1])
        except JobError as error:
            raise self.fail(error, value) from error
        return row

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        row = self._row(value, timestamp)
        if row is not None:
            self.output.collect(row, timestamp)

    def process_batch(self, values: list[Any]) -> None:
        rows = [row for row in (self._row(value, None) for value in values) if row is not None]
        if rows:
            self.output.collect_batch(rows)

    def process_watermark(self, watermark: int) -> None:
        if self.propagate_watermark or watermark == MAX_WATERMARK:
            self.output.emit_watermark(watermark)
