"""Connectors: sources and sinks found by identifier and made from a table's string options
(as Flink SQL's ``WITH ('connector' = ...)`` finds them), and the continuous mode asking the
registry for a source's feed, so that a connector defined here runs there unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest

import flowmagic
from flowmagic.api.sources import Source as ProgramSource
from flowmagic.errors import ValidationException
from flowmagic.graph.operator_params import SourceParams
from flowmagic.graph.operators import PARAMETERS, OperatorKind, OperatorSpec
from flowmagic.runtime.connectors.factories import (
    Column,
    ConnectorSource,
    TableContext,
    TableFormat,
    TableOptions,
    create_table_sink,
    create_table_source,
    find_connector,
)
from flowmagic.runtime.connectors.file_sink import FileSinkWriter
from flowmagic.runtime.connectors.file_source import FileSourceReader
from flowmagic.runtime.connectors.sinks import BlackholeSink, PrintSink
from flowmagic.runtime.connectors.sources import DatagenSource, SocketSource, Source
from flowmagic.runtime.continuous.feeds import Feed, FeedContext, OffsetFeed
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.vocabulary.types import Row


@dataclass(frozen=True, eq=False, kw_only=True)
class CounterParams(SourceParams):
    prefix: str
    rows_per_second: float


@register("connector.test-counter")
class CounterSource(Source):
    """A connector of this module: ``<prefix><n>`` for n = 0, 1, ..., for ever, at most
    ``rows-per-second`` (its records made by its subtasks from offsets, as a generator's)."""

    identifier = "test-counter"

    def __init__(self, params: CounterParams, task: TaskInfo):
        super().__init__(params, task)
        self.prefix = params.prefix

    def epoch_batches(self, inputs: list[Any]) -> Iterator[list[Any]]:
        prefix = self.prefix
        for start, end in inputs:
            yield [f"{prefix}{n}" for n in range(start, end)]

    @classmethod
    def open_feed(cls, params: CounterParams, context: FeedContext) -> Feed:
        return OffsetFeed(context, params.rows_per_second)

    @classmethod
    def create_source(cls, table: TableContext) -> ConnectorSource:
        options = TableOptions("test-counter", table, required=("prefix",), optional=("rows-per-second",))
        prefix, rows_per_second = options.string("prefix"), options.number("rows-per-second", 100.0)
        options.validate()
        assert prefix is not None and rows_per_second is not None
        params = CounterParams(prefix=prefix, rows_per_second=rows_per_second)
        return ConnectorSource(OperatorSpec("connector.test-counter", params), bounded=False)


class TableSource(ProgramSource):
    """What a connector made, as the argument of ``env.from_source``."""

    def __init__(self, made: ConnectorSource):
        self.made = made

    def operator_spec(self) -> OperatorSpec:
        return self.made.operator

    def is_bounded(self) -> bool:
        return self.made.bounded


def _table(columns: tuple[Column, ...] = (), **options: str) -> TableContext:
    return TableContext("default_catalog.default_database.t", columns, options)


def _rows(made: ConnectorSource) -> list[Any]:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    stream = env.from_source(TableSource(made), flowmagic.WatermarkStrategy.no_watermarks(), "t")
    return list(stream.execute_and_collect(executor="local"))


def test_connectors_are_found_by_identifier_as_a_source_or_a_sink() -> None:
    assert find_connector("datagen", "source") is DatagenSource
    assert find_connector("socket", "source") is SocketSource
    assert find_connector("filesystem", "source") is FileSourceReader
    assert find_connector("filesystem", "sink") is FileSinkWriter
    assert find_connector("print", "sink") is PrintSink
    assert find_connector("blackhole", "sink") is BlackholeSink
    assert find_connector("test-counter", "source") is CounterSource
    with pytest.raises(ValidationException) as error:
        find_connector("print", "source")
    assert str(error.value) == "Connector 'print' can only be used as a sink. It cannot be used as a source."


def test_an_unknown_connector_is_flinks_error_listing_the_identifiers() -> None:
    with pytest.raises(ValidationException) as error:
        find_connector("kafka")
    assert str(error.value) == (
        "Could not find any factory for identifier 'kafka' that implements "
        "'org.apache.flink.table.factories.DynamicTableFactory' in the classpath.\n\n"
        "Available factory identifiers are:\n\nblackhole\ndatagen\nfilesystem\nlegacy-csv\nprint"
    )
    # Flink lists the factories of its distribution; flowmagic's own connectors are a note.
    assert error.value.__notes__ == [
        "flowmagic has no 'kafka' connector; it offers blackhole, datagen, filesystem, print, socket, test-counter."
    ]
    with pytest.raises(ValidationException) as table_error:
        create_table_source(_table(connector="kafka", topic="t"))
    assert str(table_error.value) == (
        "Unable to create a source for reading table 'default_catalog.default_database.t'.\n\n"
        "Table options are:\n\n'connector'='kafka'\n'topic'='t'"
    )
    cause = table_error.value.__cause__
    assert str(cause) == "Cannot discover a connector using option: 'connector'='kafka'"
    assert str(cause.__cause__) == str(error.value)
    assert table_error.value.__notes__ == error.value.__notes__


def test_a_datagen_table_makes_rows_of_its_columns_from_its_options() -> None:
    columns = (Column("id", "INT"), Column("score", "DOUBLE"), Column("name", "STRING"))
    made = create_table_source(
        _table(
            columns,
            **{
                "connector": "datagen",
                "fields.id.kind": "sequence",
                "fields.id.start": "1",
                "fields.id.end": "20",
                "fields.score.min": "0",
                "fields.score.max": "10",
                "fields.name.length": "4",
                "number-of-rows": "12",
            },
        )
    )
    assert made.bounded and made.operator.kind is OperatorKind.SOURCE_DATAGEN
    rows = sorted(_rows(made), key=lambda row: row.id)
    assert [row.id for row in rows] == list(range(1, 13))
    assert all(isinstance(row, Row) and 0 <= row.score <= 10 and len(row.name) == 4 for row in rows)
    # The records of a replayed epoch are the same: each row's randomness is seeded by its index.
    assert sorted(_rows(made), key=lambda row: row.id) == rows
    unbounded = create_table_source(_table((Column("n", "BIGINT"),), connector="datagen"))
    assert not unbounded.bounded and unbounded.operator.params.rows_per_second == 10000


def test_bad_options_are_flinks_errors() -> None:
    def failure(**options: str) -> str:
        with pytest.raises(ValidationException) as error:
            create_table_source(_table((Column("id", "INT"),), **options))
        assert str(error.value).startswith("Unable to create a source for reading table")
        return str(error.value.__cause__)

    assert failure(connector="datagen", **{"rows-per-second": "fast"}) == "Invalid value for option 'rows-per-second'."
    # As Flink 2.3.0 says it (checked there).
    assert failure(connector="datagen", **{"fields.id.kind": "sequence", "fields.id.start": "1"}) == (
        "Could not find required property 'fields.id.end' for sequence generator."
    )
    assert failure(connector="datagen", **{"fields.id.kind": "sequential"}) == "Unsupported generator kind: sequential"
    assert failure(connector="datagen", path="/tmp") == (
        "Unsupported options found for 'datagen'.\n\nUnsupported options:\n\npath\n\nSupported options:\n\n"
        "connector\nfields.id.kind\nfields.id.max\nfields.id.min\nnumber-of-rows\nproperty-version\nrows-per-second"
    )
    assert failure(connector="filesystem", format="raw") == (
        "One or more required options are missing.\n\nMissing required options are:\n\npath"
    )
    assert failure(connector="filesystem", path="/tmp", format="avro") == (
        "Could not find any format factory for identifier 'avro' in the classpath."
    )
    assert failure(connector="socket", hostname="localhost", port="9", format="avro").startswith(
        "Could not find any factory for identifier 'avro' that implements "
        "'org.apache.flink.table.factories.DeserializationFormatFactory'"
    )
    assert failure(connector="datagen", **{"fields.id.kind": "sequence"}) == (
        "Could not find required property 'fields.id.start' for sequence generator."
    )
    assert failure(connector="socket", hostname="localhost", port="http", format="raw") == (
        "Invalid value for option 'port'."
    )
    socket = {"connector": "socket", "hostname": "localhost", "port": "9999", "format": "raw"}
    assert failure(**socket, **{"raw.charset": "latin-1"}) == "Invalid value for option 'raw.charset'."
    assert create_table_source(_table(**socket)).parallelism == 1


def test_a_filesystem_table_reads_the_lines_of_its_files_and_print_and_blackhole_are_sinks(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    (tmp_path / "b.txt").write_text("three\n")
    made = create_table_source(
        _table((Column("line", "STRING"),), connector="filesystem", path=str(tmp_path), format="raw")
    )
    assert made.bounded
    assert sorted(_rows(made)) == ["one", "three", "two"]
    monitored = create_table_source(
        _table(connector="filesystem", path=str(tmp_path), format="raw", **{"source.monitor-interval": "2 s"})
    )
    assert not monitored.bounded and monitored.operator.params.discovery_interval_ms == 2000
    printed = create_table_sink(_table(connector="print", **{"print-identifier": "out", "standard-error": "true"}))
    assert printed.operator is not None and printed.operator.kind is OperatorKind.PRINT
    assert (printed.operator.params.identifier, printed.operator.params.stderr) == ("out", True)
    assert create_table_sink(_table(connector="blackhole")).operator.kind is OperatorKind.BLACKHOLE
    files = create_table_sink(_table(connector="filesystem", path=str(tmp_path / "out"), format="raw"))
    assert (files.file_base_path, files.charset) == (str(tmp_path / "out"), "UTF-8")


def test_a_tables_format_and_what_a_source_lets_the_planner_push_into_it(tmp_path) -> None:
    csv = create_table_source(
        _table(
            (Column("id", "INT NOT NULL"), Column("name", "STRING")),
            connector="filesystem",
            path=str(tmp_path),
            format="csv",
            **{"csv.null-literal": "-", "csv.an-option-of-a-newer-csv": "x"},
        )
    )
    # As Flink's filesystem connector, the format's own options are the format's to read.
    assert csv.format == TableFormat("csv", {"null-literal": "-", "an-option-of-a-newer-csv": "x"})
    assert (csv.projection_push_down, csv.filter_push_down, csv.bounded) == (True, True, True)
    sink = create_table_sink(_table(connector="filesystem", path=str(tmp_path), format="json"))
    assert sink.format == TableFormat("json", {})
    socket = {"connector": "socket", "hostname": "localhost", "port": "9999", "format": "csv"}
    assert create_table_source(_table(**socket, **{"csv.field-delimiter": ";"})).format == TableFormat(
        "csv", {"field-delimiter": ";"}
    )
    with pytest.raises(ValidationException) as error:
        create_table_source(_table(**socket, **{"csv.not-an-option": ";"}))
    assert "Unsupported options:\n\ncsv.not-an-option\n\n" in str(error.value.__cause__)
    generated = create_table_source(
        _table((Column("id", "INT NOT NULL"),), connector="datagen", **{"number-of-rows": "3"})
    )
    assert (generated.format, generated.projection_push_down, generated.filter_push_down) == (None, False, False)
    assert len(_rows(generated)) == 3
    prices = create_table_source(
        _table(
            (Column("price", "DECIMAL(5, 2)"), Column("any", "DECIMAL(3, 1) NOT NULL")),
            connector="datagen",
            **{"number-of-rows": "20", "fields.price.min": "1", "fields.price.max": "2.5"},
        )
    )
    rows = _rows(prices)
    assert all(Decimal(1) <= row.price <= Decimal("2.5") and row.price.as_tuple().exponent == -2 for row in rows)
    assert all(abs(row.any) <= Decimal("99.9") and row.any.as_tuple().exponent == -1 for row in rows)
    # The continuous mode makes rows by offset range (tuples); a bounded read row by row: the same values.
    generator = prices.operator.params.generator
    assert [tuple(generator(index)) for index in range(20)] == generator.tuples(0, 20)
    assert all(Decimal(1) <= price <= Decimal("2.5") for price, _ in generator.tuples(100, 140))
    # Flink generates a random column of any type, so such a table plans; reading it is what
    # flowmagic refuses, naming the column. A sequence of timestamps Flink refuses itself.
    stamps = create_table_source(
        _table((Column("at", "TIMESTAMP(3)"),), connector="datagen", **{"number-of-rows": "2"})
    )
    with pytest.raises(flowmagic.FlowError, match=r"does not generate TIMESTAMP\(3\) values yet \(column 'at'\)"):
        _rows(stamps)
    with pytest.raises(ValidationException) as error:
        create_table_source(
            _table(
                (Column("at", "TIMESTAMP(3)"),),
                connector="datagen",
                **{"fields.at.kind": "sequence", "fields.at.start": "1", "fields.at.end": "2"},
            )
        )
    assert str(error.value.__cause__) == "Unsupported type: TIMESTAMP(3)"
    assert error.value.__notes__[0].startswith("flowmagic's datagen generates TINYINT")


@pytest.mark.e2e
def test_a_connector_registered_here_runs_in_the_continuous_mode(spark, monkeypatch) -> None:
    # A connector's module enters its kind's parameters when imported; this test's entry is
    # taken out again, as the other tests check that PARAMETERS holds flowmagic's kinds only.
    monkeypatch.setitem(PARAMETERS, "connector.test-counter", CounterParams)
    made = create_table_source(_table(connector="test-counter", prefix="tick-", **{"rows-per-second": "200"}))
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    stream = env.from_source(TableSource(made), flowmagic.WatermarkStrategy.no_watermarks(), "ticks")
    records = list(stream.execute_and_collect(limit=300))
    assert len(records) == 300 and len(set(records)) == 300
    assert all(record.startswith("tick-") for record in records)
