"""Where SQL rows come from: ``VALUES`` and tables' sources (``datagen``, ``filesystem`` csv
and json), each subtask producing its share as rows of the table's types, kind ``+I``."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

from flowmagic.errors import JobError, UnsupportedSourceError
from flowmagic.graph.operator_params import DatagenSourceParams, SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime import ScanSpec, ValuesSpec
from flowmagic.runtime.connectors.factories import Column, TableContext
from flowmagic.runtime.connectors.sources import DatagenSource, Source, chunks, local_path, split_file
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.records import BATCH_SIZE
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.operator import INSERT, compile_code, runnable_spec
from flowmagic.runtime.sql.values import parse_timestamp, parse_type

__all__ = ["TableSourceScan", "ValuesSource"]


@register(OperatorKind.SQL_VALUES)
class ValuesSource(Source):
    """``VALUES``: its rows, from its one subtask."""

    def __init__(self, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(params, task)
        spec = runnable_spec("Values", params)
        assert isinstance(spec, ValuesSpec)
        self.rows = [(*row, INSERT) for row in spec.rows]

    def batches(self) -> Iterator[list[Any]]:
        if self.task.index == 0:
            yield from chunks(self.rows)


def _converter(type_text: str, null_literal: str | None) -> Callable[[Any], Any]:
    """Text (csv) or a JSON value into a value of the column's type."""
    info = parse_type(type_text)
    name = info.name
    character = name in ("STRING", "VARCHAR", "CHAR")

    def absent(value: Any) -> bool:
        return value is None or value == null_literal or (value == "" and not character)

    if character:
        return lambda value: None if value is None or value == null_literal else str(value)
    if name in ("INT", "BIGINT", "SMALLINT", "TINYINT"):
        return lambda value: None if absent(value) else int(value)
    if name in ("DOUBLE", "FLOAT"):
        return lambda value: None if absent(value) else float(value)
    if name == "DECIMAL":
        quantum = Decimal(1).scaleb(-(info.scale or 0))

        def decimal(value: Any) -> Any:
            if absent(value):
                return None
            try:
                return Decimal(str(value)).quantize(quantum)
            except InvalidOperation:
                return None

        return decimal
    if name == "BOOLEAN":
        return lambda value: None if absent(value) else (value if isinstance(value, bool) else value.lower() == "true")
    if info.is_timestamp:
        return lambda value: None if absent(value) else parse_timestamp(str(value))
    raise JobError(f"flowmagic cannot read columns of type {type_text} from files yet")


@register(OperatorKind.SQL_TABLE_SOURCE_SCAN)
class TableSourceScan(Source):
    """A table's source: ``datagen`` (bounded: ``number-of-rows`` or sequences) and
    ``filesystem`` (``csv``, ``json``), the projection pushed into it applied."""

    def __init__(self, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(params, task)
        spec = runnable_spec(params.description or "TableSourceScan", params)
        assert isinstance(spec, ScanSpec)
        self.spec = spec
        self.options = dict(spec.options)
        self.filter = compile_code(spec.filter, "filter", task) if spec.filter is not None else None

    def batches(self) -> Iterator[list[Any]]:
        connector = self.options.get("connector")
        if connector == "datagen":
            rows = self._datagen()
        elif connector == "filesystem":
            rows = self._filesystem()
        else:
            raise JobError(f"flowmagic cannot read tables of connector '{connector}' yet ({self.spec.table})")
        keep = self.filter
        for batch in rows:
            yield [r for r in batch if keep(r)] if keep is not None else batch

    def _datagen(self) -> Iterator[list[Any]]:
        table = TableContext(
            self.spec.table, tuple(Column(n, t) for n, t in self.spec.columns), {**self.options, "connector": "datagen"}
        )
        source = DatagenSource.create_source(table)
        if not source.bounded:
            raise UnsupportedSourceError(
                f"Table '{self.spec.table}' is an unbounded datagen source ('rows-per-second' without "
                "'number-of-rows'): flowmagic runs unbounded SQL sources in the continuous mode, which comes later."
            )
        params = source.operator.params
        assert isinstance(params, DatagenSourceParams)
        reader = DatagenSource(params, self.task)
        projection = self.spec.projection
        for batch in reader.batches():
            yield [(*(tuple(row)[i] for i in projection), INSERT) for row in batch]

    def _filesystem(self) -> Iterator[list[Any]]:
        path = self.options["path"]
        local = local_path(path)
        if local is None:
            raise JobError(f"flowmagic reads filesystem tables from local paths only ({self.spec.table}: {path})")
        splits = split_file(local)
        mine = splits[self.task.index :: self.task.parallelism]
        fmt = self.options.get("format")
        null_literal = self.options.get(f"{fmt}.null-literal")
        columns = self.spec.columns
        projection = self.spec.projection
        converters = [_converter(columns[i][1], null_literal) for i in projection]
        for split in mine:
            lines = _split_lines(*split)
            if fmt == "csv":
                delimiter = self.options.get("csv.field-delimiter", ",")
                for batch in lines:
                    out = []
                    for fields in csv.reader(batch, delimiter=delimiter):
                        out.append(
                            (
                                *(
                                    c(fields[i]) if i < len(fields) else None
                                    for c, i in zip(converters, projection, strict=True)
                                ),
                                INSERT,
                            )
                        )
                    yield out
            elif fmt == "json":
                names = [columns[i][0] for i in projection]
                for batch in lines:
                    out = []
                    for line in batch:
                        if not line.strip():
                            continue
                        record = json.loads(line)
                        out.append((*(c(record.get(n)) for c, n in zip(converters, names, strict=True)), INSERT))
                    yield out
            else:
                raise JobError(f"flowmagic cannot read the '{fmt}' format yet ({self.spec.table})")


def _split_lines(path: str, start: int, end: int) -> Iterator[list[str]]:
    """The lines that start in ``[start, end)`` of ``path`` (the first split owns the first
    line), in batches."""
    with open(path, "rb") as file:
        if start > 0:
            file.seek(start - 1)
            if file.read(1) != b"\n":
                file.readline()
        batch: list[str] = []
        while file.tell() < end:
            line = file.readline()
            if not line:
                break
            batch.append(line.decode("utf-8").rstrip("\r\n"))
            if len(batch) >= BATCH_SIZE * 16:
                yield batch
                batch = []
        if batch:
            yield batch
