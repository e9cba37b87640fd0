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
from flowmagic.runtime.connectors.sources import (
    DatagenFields,
    DatagenSource,
    Source,
    chunks,
    local_path,
    split_file,
    split_lines,
)
from flowmagic.runtime.continuous.feeds import Feed, FeedContext, OffsetFeed
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.records import BATCH_SIZE
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.operator import INSERT, compile_code, runnable_spec
from flowmagic.runtime.sql.values import parse_date, parse_timestamp, parse_type
from flowmagic.vocabulary.time import to_millis_text

__all__ = ["TableSourceScan", "ValuesSource"]

_LINES = 2048


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


def _csv_parser(
    types: list[str], projection: tuple[int, ...], delimiter: str, null_literal: str | None
) -> Callable[[list[str]], list[Any]]:
    """``parse(lines) -> rows``: CSV lines into rows of the projected columns' types; lines
    without quotes are split directly, others read by the csv module."""
    converters = [_converter(t, null_literal) for t in types]
    width = max(projection) + 1 if projection else 0
    parts = []
    for n, (type_text, i) in enumerate(zip(types, projection, strict=True)):
        name = parse_type(type_text).name
        field = f"f[{i}]"
        present = field if null_literal is None else f"{field} and {field} != _null"
        # The common types inline (the scan's hot loop), the others through their converter.
        if name in ("INT", "BIGINT", "SMALLINT", "TINYINT"):
            parts.append(f"(int({field}) if {present} else None)")
        elif name in ("STRING", "VARCHAR") and null_literal is None:
            parts.append(f"f[{i}]")
        else:
            parts.append(f"_c{n}(f[{i}])")
    fields = ", ".join(parts)
    source = (
        "def parse(lines):\n"
        "    out = []\n"
        "    append = out.append\n"
        "    quoted = any('\"' in line for line in lines)\n"
        "    for f in (_reader(lines, delimiter=_delimiter) if quoted else lines):\n"
        "        if not quoted:\n"
        "            f = f.split(_delimiter)\n"
        f"        if len(f) < {width}:\n"
        f"            f = f + [None] * ({width} - len(f))\n"
        f"        append(({fields}{', ' if fields else ''}{INSERT}))\n"
        "    return out\n"
    )
    namespace: dict[str, Any] = {"_reader": csv.reader, "_delimiter": delimiter, "_null": null_literal}
    namespace.update({f"_c{n}": c for n, c in enumerate(converters)})
    # The source is built here from the column count and indexes only: no text of the table's.
    exec(compile(source, "<flowmagic SQL csv>", "exec"), namespace)
    parse: Callable[[list[str]], list[Any]] = namespace["parse"]
    return parse


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
    if name == "DATE":
        return lambda value: None if absent(value) else parse_date(str(value))
    raise JobError(f"flowmagic cannot read columns of type {type_text} from files yet")


@register(OperatorKind.SQL_TABLE_SOURCE_SCAN)
class TableSourceScan(Source):
    """A table's source: ``datagen`` and ``filesystem`` (``csv``, ``json``), the projection
    pushed into it applied. An unbounded ``datagen`` (``rows-per-second`` without
    ``number-of-rows``) runs in the continuous mode, fed by offsets: row ``i`` is made from
    ``i`` alone (:meth:`DatagenFields.tuples`), so a replayed epoch makes the same rows. A
    ``filesystem`` table with ``source.monitor-interval`` runs there too, fed by the
    DataStream API's monitored file source (:class:`FileMonitorFeed`): each new file's lines
    once, exactly once across checkpoints and restores."""

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
        params, bounded = _datagen_params(self.spec)
        if not bounded:
            raise UnsupportedSourceError(
                f"Table '{self.spec.table}' is an unbounded datagen source ('rows-per-second' without "
                "'number-of-rows'): it runs in the continuous mode, on Spark only."
            )
        reader = DatagenSource(params, self.task)
        projection = self.spec.projection
        for batch in reader.batches():
            yield [(*(tuple(row)[i] for i in projection), INSERT) for row in batch]

    def epoch_batches(self, inputs: list[Any]) -> Iterator[list[Any]]:
        if self.options.get("connector") == "filesystem":
            # A monitored directory's share of the epoch's lines, as its FileMonitor logged them.
            parse, keep = self._line_parser(), self.filter
            for lines in chunks(inputs):
                rows = parse(lines)
                yield [r for r in rows if keep(r)] if keep is not None else rows
            return
        params, _bounded = _datagen_params(self.spec)
        fields = params.generator
        assert isinstance(fields, DatagenFields)
        projection, keep = tuple(self.spec.projection), self.filter
        for start, end in inputs:
            for first in range(start, end, BATCH_SIZE):
                # The projected columns alone are made, each row with its kind.
                made = fields.tuples(first, min(end, first + BATCH_SIZE), params.seed, projection, INSERT)
                yield [r for r in made if keep(r)] if keep is not None else made

    @classmethod
    def open_feed(cls, params: SqlOperatorParams, context: FeedContext) -> Feed:
        spec = runnable_spec(params.description or "TableSourceScan", params)
        assert isinstance(spec, ScanSpec)
        options = dict(spec.options)
        if options.get("connector") == "filesystem" and "source.monitor-interval" in options:
            # Below the runtime's sources in the imports: the monitor reads files with them.
            from flowmagic.runtime.continuous.file_monitor import FileMonitorFeed

            path = local_path(options["path"])
            if path is None:
                raise JobError(f"flowmagic reads filesystem tables from local paths only ({spec.table})")
            interval = to_millis_text(options["source.monitor-interval"], "source.monitor-interval")
            return FileMonitorFeed(context, [path], "UTF-8", interval)
        if options.get("connector") != "datagen":
            raise UnsupportedSourceError(
                f"Table '{spec.table}': flowmagic runs unbounded SQL sources of the 'datagen' and 'filesystem' "
                "connectors only, for now."
            )
        datagen, _bounded = _datagen_params(spec)
        return OffsetFeed(context, datagen.rows_per_second)

    def _filesystem(self) -> Iterator[list[Any]]:
        path = self.options["path"]
        local = local_path(path)
        if local is None:
            raise JobError(f"flowmagic reads filesystem tables from local paths only ({self.spec.table}: {path})")
        if "source.monitor-interval" in self.options:
            raise UnsupportedSourceError(
                f"Table '{self.spec.table}' monitors its path ('source.monitor-interval'): an unbounded source, "
                "it runs in the continuous mode, on Spark only."
            )
        parse = self._line_parser()
        for split in split_file(local)[self.task.index :: self.task.parallelism]:
            for batch in split_lines(*split, batch=_LINES):
                yield parse(batch)

    def _line_parser(self) -> Callable[[list[str]], list[Any]]:
        """``parse(lines) -> rows``: lines of the table's format into rows of the projection."""
        fmt = self.options.get("format")
        null_literal = self.options.get(f"{fmt}.null-literal")
        columns = self.spec.columns
        projection = self.spec.projection
        if fmt == "csv":
            delimiter = self.options.get("csv.field-delimiter", ",")
            return _csv_parser([columns[i][1] for i in projection], projection, delimiter, null_literal)
        if fmt != "json":
            raise JobError(f"flowmagic cannot read the '{fmt}' format yet ({self.spec.table})")
        converters = [_converter(columns[i][1], null_literal) for i in projection]
        names = [columns[i][0] for i in projection]

        def parse(lines: list[str]) -> list[Any]:
            out = []
            for line in lines:
                if not line.strip():
                    continue
                record = json.loads(line)
                out.append((*(c(record.get(n)) for c, n in zip(converters, names, strict=True)), INSERT))
            return out

        return parse


def _datagen_params(spec: ScanSpec) -> tuple[DatagenSourceParams, bool]:
    """The data generator of a ``datagen`` table, and whether it is bounded."""
    options = {**dict(spec.options), "connector": "datagen"}
    table = TableContext(spec.table, tuple(Column(n, t) for n, t in spec.columns), options)
    source = DatagenSource.create_source(table)
    params = source.operator.params
    assert isinstance(params, DatagenSourceParams)
    return params, source.bounded
