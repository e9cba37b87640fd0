"""DataStreams as tables (``from_data_stream``, ``create_temporary_view(name, stream)``) against
what PyFlink 2.3 did (recorded/from_data_stream_pyflink.json, made by record_from_data_stream.py):
the schemas derived from the streams' types, the EXPLAIN texts, the stream and SQL parts in one
job, and the rows, bounded on both executors and unbounded in the continuous mode."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import flowmagic
from flowmagic import Row, Types
from flowmagic.errors import FlowError
from flowmagic.sql.errors import ValidationException
from flowmagic.table import EnvironmentSettings, ExplainDetail, Schema, StreamTableEnvironment
from flowmagic.vocabulary.time import Duration
from flowmagic.vocabulary.types import RowKind
from flowmagic.vocabulary.watermarks import TimestampAssigner, WatermarkStrategy
from tests.continuous_support import LineServer

RECORDED_DIR = Path(__file__).parent / "recorded"
RECORDED = json.loads((RECORDED_DIR / "from_data_stream_pyflink.json").read_text())
#: to_changelog_stream's rows of the same three records (recorded by record_bridges.py).
CHANGELOG = [
    line.split(" ", 1)[1]
    for line in json.loads((RECORDED_DIR / "bridges_pyflink.json").read_text())["stdout"]
    if line.startswith("ROW ")
]

TUPLES = [("a", 1), ("b", 2), ("a", 3)]
TUPLE_TYPE = Types.TUPLE([Types.STRING(), Types.INT()])
EVENTS = [("a", 1, 1000), ("b", 2, 2000), ("a", 3, 12000), ("b", 4, 13000), ("a", 5, 25000)]
EVENT_TYPE = Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG()])
GROUP = "SELECT f0, SUM(f1) AS s FROM v GROUP BY f0"
FILTER = "SELECT f0, f1 * 10 AS x FROM v WHERE f1 > 1"
QUERIES = {"group": GROUP, "filter": FILTER}
WINDOW = (
    "SELECT window_start, window_end, f0, SUM(f1) AS s FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(rowtime), "
    "INTERVAL '10' SECOND)) GROUP BY window_start, window_end, f0"
)
ANONYMOUS = re.compile(r"anonymous_datastream_source\$\d+")


class Millis(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[2]


def _environment(executor: str = "local", batch: bool = False, parallelism: int = 1):
    env = flowmagic.StreamExecutionEnvironment(parallelism=parallelism)
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t_env = StreamTableEnvironment.create(env, settings)
    t_env.get_config().set("flowmagic.executor", executor)
    t_env.get_config().set("table.local-time-zone", "UTC")
    return env, t_env


def _view(executor: str = "local", batch: bool = False):
    env, t_env = _environment(executor, batch)
    t_env.create_temporary_view("v", env.from_collection(TUPLES, type_info=TUPLE_TYPE))
    return env, t_env


def _events(executor: str = "local"):
    env, t_env = _environment(executor)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1)).with_timestamp_assigner(Millis())
    events = env.from_collection(EVENTS, type_info=EVENT_TYPE).assign_timestamps_and_watermarks(strategy)
    schema = (
        Schema.new_builder()
        .column_by_metadata("rowtime", "TIMESTAMP_LTZ(3)")
        .watermark("rowtime", "SOURCE_WATERMARK()")
        .build()
    )
    t_env.create_temporary_view("ev", events, schema)
    return env, t_env


def _rows(result) -> list[list[object]]:
    """Each row as the recorder wrote it: its kind and its values' reprs."""
    with result.collect() as rows:
        return [[str(row.get_row_kind()), [repr(v) for v in row]] for row in rows]


@pytest.mark.parametrize("name", sorted(RECORDED["schemas"]))
def test_the_schema_is_derived_from_the_streams_type_as_pyflink_derives_it(name):
    env, t_env = _environment()
    streams = {
        "row_named": ([Row(name="a", v=1)], Types.ROW_NAMED(["name", "v"], [Types.STRING(), Types.LONG()])),
        "row": ([Row("a", 1)], Types.ROW([Types.STRING(), Types.INT()])),
        "int": ([1, 2], Types.INT()),
        "string": (["x"], Types.STRING()),
        "double": ([1.5], Types.DOUBLE()),
        "boolean": ([True], Types.BOOLEAN()),
    }
    schemas = {
        "tuple_rowtime": Schema.new_builder()
        .column_by_metadata("rowtime", "TIMESTAMP_LTZ(3)")
        .watermark("rowtime", "SOURCE_WATERMARK()")
        .build(),
        "tuple_computed": Schema.new_builder().column_by_expression("x", "f1 * 10").build(),
        "tuple_columns": Schema.new_builder().column("f1", "BIGINT").column("f0", "STRING").build(),
    }
    data, type_info = streams.get(name, (TUPLES, TUPLE_TYPE))
    given = (schemas[name],) if name in schemas else ()
    table = t_env.from_data_stream(env.from_collection(data, type_info=type_info), *given)
    assert str(table.get_resolved_schema()) == RECORDED["schemas"][name]


@pytest.mark.parametrize("label", sorted(QUERIES))
def test_a_view_of_a_stream_explains_as_flink(label):
    _env, t_env = _view()
    assert t_env.explain_sql(QUERIES[label]) == RECORDED["streaming"][f"explain_{label}"]
    _env, t_env = _view()
    # The physical execution plan: the stream's source, its DataStreamToTable conversion, the query.
    assert (
        t_env.explain_sql(QUERIES[label], ExplainDetail.JSON_EXECUTION_PLAN)
        == (RECORDED["streaming"][f"explain_json_{label}"])
    )
    _env, t_env = _view(batch=True)
    if label == "group":
        assert t_env.explain_sql(GROUP) == RECORDED["batch"]["explain_group"]


def test_a_named_row_stream_at_parallelism_two_explains_as_flink():
    env, t_env = _environment(parallelism=2)
    people = env.from_collection(
        [Row(name="a", v=1), Row(name="b", v=2), Row(name="a", v=3)],
        type_info=Types.ROW_NAMED(["name", "v"], [Types.STRING(), Types.LONG()]),
    )
    t_env.create_temporary_view("people", people)
    query = "SELECT name, COUNT(*) AS c FROM people GROUP BY name"
    assert t_env.explain_sql(query, ExplainDetail.JSON_EXECUTION_PLAN) == RECORDED["named_explain_json"]


def test_an_anonymous_table_of_a_stream_explains_as_flink():
    env, t_env = _environment()
    table = t_env.from_data_stream(env.from_collection(TUPLES, type_info=TUPLE_TYPE))
    # Flink numbers anonymous tables with one counter per process: the number is the only difference.
    assert ANONYMOUS.sub("N", table.explain()) == ANONYMOUS.sub("N", RECORDED["anonymous_explain"])
    env, t_env = _environment()
    table = t_env.from_data_stream(env.from_collection(TUPLES, type_info=TUPLE_TYPE))
    explained = t_env.explain_sql(f"SELECT f0, f1 FROM {table} WHERE f1 > 1")
    assert ANONYMOUS.sub("N", explained) == ANONYMOUS.sub("N", RECORDED["anonymous_query_explain"])


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_the_stream_and_the_query_are_one_job_as_flink_builds_it(mode):
    env, t_env = _view(batch=mode == "batch")
    t_env.to_changelog_stream(t_env.sql_query(GROUP)).print()
    plan = json.loads(env.get_execution_plan())["nodes"]
    recorded = RECORDED[mode]["changelog_stream_plan"]["nodes"]
    # PyFlink's print() of a Row-typed stream maps each Row to a string first (a "Map" before the
    # sink, which flowmagic's print does not need): the plans agree up to the print sink.
    conversion = next(i for i, node in enumerate(recorded) if node["type"] == "TableToDataStream")
    assert plan[: conversion + 1] == recorded[: conversion + 1]
    assert plan[-1]["type"] == recorded[-1]["type"] == "Sink: Print to Std. Out"
    vertices = env.get_stream_graph().get_job_graph().to_dict()["vertices"]
    assert [(v["name"], v["parallelism"]) for v in vertices] == [
        (v["name"].replace(" -> Map", ""), v["parallelism"]) for v in RECORDED[mode]["changelog_job_graph"]
    ]


@pytest.mark.parametrize("executor", ["local", "spark"])
def test_a_view_of_a_bounded_stream_gives_flinks_rows(executor, request):
    if executor == "spark":
        request.getfixturevalue("spark")
    for label, query in QUERIES.items():
        _env, t_env = _view(executor)
        assert _rows(t_env.execute_sql(query)) == RECORDED["streaming"][f"rows_{label}"], label
    _env, t_env = _view(executor, batch=True)
    assert _rows(t_env.execute_sql(GROUP)) == RECORDED["batch"]["rows_group"]
    env, t_env = _environment(executor)
    table = t_env.from_data_stream(env.from_collection(TUPLES, type_info=TUPLE_TYPE))
    assert _rows(table.execute()) == RECORDED["anonymous_rows"]


@pytest.mark.parametrize("executor", ["local", "spark"])
def test_a_window_over_the_streams_own_watermarks_gives_flinks_rows(executor, request):
    if executor == "spark":
        request.getfixturevalue("spark")
    _env, t_env = _events(executor)
    assert str(t_env.from_path("ev").get_resolved_schema()) == RECORDED["rowtime_schema"]
    assert t_env.explain_sql(WINDOW) == RECORDED["rowtime_explain"]
    _env, t_env = _events(executor)
    # Which key of one window comes first is the order the watermark fires the keys' timers in,
    # not a contract (the shared SQL cases claim PER_KEY order for windows): sorted by window and key.
    assert sorted(_rows(t_env.execute_sql(WINDOW))) == sorted(RECORDED["rowtime_rows"])
    _env, t_env = _events(executor)
    query = "SELECT f0, f1, CAST(rowtime AS TIMESTAMP(3)) AS ts FROM ev"
    assert _rows(t_env.execute_sql(query)) == RECORDED["rowtime_select_rows"]


def test_an_unbounded_stream_from_a_socket_runs_a_sql_aggregate_in_the_continuous_mode(spark):
    server = LineServer()
    try:
        env, t_env = _environment("spark")
        lines = env.socket_text_stream("127.0.0.1", server.port)
        records = lines.map(lambda line: (line.split(",")[0], int(line.split(",")[1])), output_type=TUPLE_TYPE)
        t_env.create_temporary_view("v", records)
        stream = t_env.to_changelog_stream(t_env.sql_query(GROUP))
        seen: list[str] = []
        with stream.execute_and_collect() as rows:
            server.send(*(f"{k},{v}" for k, v in TUPLES))
            for row in rows:
                seen.append(f"{row.get_row_kind()} {row} {row!r}")
                if len(seen) == len(CHANGELOG):
                    break
    finally:
        server.close()

    def per_key(lines: list[str]) -> dict[str, list[str]]:
        keyed: dict[str, list[str]] = {}
        for line in lines:
            keyed.setdefault(line.split("f0='")[1][0], []).append(line)
        return keyed

    # The keys' rows may interleave differently across an epoch; each key's are Flink's, in order.
    assert per_key(seen) == per_key(CHANGELOG)


def test_a_stream_without_a_declared_type_is_refused_clearly():
    env, t_env = _environment()
    with pytest.raises(ValidationException, match="has no declared type"):
        t_env.from_data_stream(env.from_collection([("a", 1)]))


def test_an_updating_row_in_the_stream_fails_the_job_in_flinks_words():
    env, t_env = _environment()
    row = Row(name="a", v=1)
    row.set_row_kind(RowKind.UPDATE_AFTER)
    rows = env.from_collection([row], type_info=Types.ROW_NAMED(["name", "v"], [Types.STRING(), Types.LONG()]))
    table = t_env.from_data_stream(rows)
    with pytest.raises(
        FlowError, match="Conversion expects insert-only records but DataStream API record contains: UPDATE_AFTER"
    ):
        _rows(table.execute())


def test_create_temporary_view_of_a_table_and_of_a_stream_with_a_schema():
    env, t_env = _environment()
    stream = env.from_collection(TUPLES, type_info=TUPLE_TYPE)
    t_env.create_temporary_view("w", stream, Schema.new_builder().column_by_expression("x", "f1 * 10").build())
    t_env.create_temporary_view("big", t_env.sql_query("SELECT f0, x FROM w WHERE x > 10"))
    assert _rows(t_env.execute_sql("SELECT * FROM big")) == [["+I", ["'b'", "20"]], ["+I", ["'a'", "30"]]]
    assert "big" in t_env.list_tables() and "w" in t_env.list_tables()


def _changelog_view(executor: str = "local"):
    env, t_env = _environment(executor)
    rows = []
    for kind, name, v in (
        (RowKind.INSERT, "a", 1),
        (RowKind.INSERT, "b", 2),
        (RowKind.UPDATE_BEFORE, "a", 1),
        (RowKind.UPDATE_AFTER, "a", 5),
        (RowKind.DELETE, "b", 2),
    ):
        row = Row(name=name, v=v)
        row.set_row_kind(kind)
        rows.append(row)
    stream = env.from_collection(rows, type_info=Types.ROW_NAMED(["name", "v"], [Types.STRING(), Types.INT()]))
    t_env.create_temporary_view("cl", t_env.from_changelog_stream(stream))
    return t_env


@pytest.mark.parametrize("executor", ["local", "spark"])
def test_a_changelog_stream_is_an_updating_table_as_in_flink(executor, request):
    if executor == "spark":
        request.getfixturevalue("spark")
    group = "SELECT name, SUM(v) AS s FROM cl GROUP BY name"
    explained = _changelog_view(executor).explain_sql(group, ExplainDetail.CHANGELOG_MODE)
    assert ANONYMOUS.sub("N", explained) == ANONYMOUS.sub("N", RECORDED["changelog_explain_group"])
    assert _rows(_changelog_view(executor).execute_sql(group)) == RECORDED["changelog_rows_group"]
    # Read as it is, EXPLAIN's query drops the UPDATE_BEFORE rows (DropUpdateBefore); the
    # collect sink at execution takes every kind, so the rows keep them, as Flink's did.
    explained = _changelog_view(executor).explain_sql("SELECT * FROM cl", ExplainDetail.CHANGELOG_MODE)
    assert ANONYMOUS.sub("N", explained) == ANONYMOUS.sub("N", RECORDED["changelog_explain_all"])
    assert _rows(_changelog_view(executor).execute_sql("SELECT * FROM cl")) == RECORDED["changelog_rows_all"]


def test_an_unbounded_streams_watermarks_close_sql_windows_in_the_continuous_mode(spark):
    server = LineServer()
    try:
        env, t_env = _environment("spark")
        strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1)).with_timestamp_assigner(
            Millis()
        )
        events = (
            env.socket_text_stream("127.0.0.1", server.port)
            .map(
                lambda line: (line.split(",")[0], int(line.split(",")[1]), int(line.split(",")[2])),
                output_type=EVENT_TYPE,
            )
            .assign_timestamps_and_watermarks(strategy)
        )
        schema = (
            Schema.new_builder()
            .column_by_metadata("rowtime", "TIMESTAMP_LTZ(3)")
            .watermark("rowtime", "SOURCE_WATERMARK()")
            .build()
        )
        t_env.create_temporary_view("ev", events, schema)
        stream = t_env.to_changelog_stream(t_env.sql_query(WINDOW))
        seen: list[tuple[str, list[object]]] = []
        with stream.execute_and_collect() as rows:
            server.send(*(",".join(map(str, event)) for event in EVENTS))
            for row in rows:
                seen.append((str(row.get_row_kind()), list(row)))
                if len(seen) == 4:
                    break
    finally:
        server.close()
    # The stream's watermark (the last event's time less a second) closes the first two
    # windows; the third stays open while the stream runs, as in Flink.
    expected = [
        (kind, values)
        for kind, values in RECORDED["rowtime_rows"]
        if values[1] != "datetime.datetime(1970, 1, 1, 0, 0, 30)"
    ]
    assert sorted((kind, [repr(v) for v in values]) for kind, values in seen) == sorted(
        (kind, values) for kind, values in expected
    )


def test_an_unbounded_stream_is_refused_in_batch_mode_in_flinks_words():
    env, t_env = _environment(batch=True)
    lines = env.socket_text_stream("127.0.0.1", 9)
    t_env.create_temporary_view("lines", lines.map(lambda line: line, output_type=Types.STRING()))
    with pytest.raises(ValidationException) as refused:
        t_env.explain_sql("SELECT f0 FROM lines")
    assert str(refused.value) == (
        "Querying an unbounded table 'default_catalog.default_database.lines' in batch mode is not allowed. "
        "The table source is unbounded."
    )
