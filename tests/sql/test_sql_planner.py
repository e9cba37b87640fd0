"""flowmagic.table's statements and errors, as Flink 2.3 carries them out (messages checked on
Flink 2.3.0's planner)."""

from __future__ import annotations

import re

import pytest

from flowmagic import FlowError
from flowmagic.sql.errors import SqlParserException, TableException, ValidationException
from flowmagic.sql.exec_nodes import nodes
from flowmagic.table import EnvironmentSettings, ExplainDetail, TableEnvironment

GEN = (
    "CREATE TABLE g (id INT, k AS CAST(id AS STRING), ts AS PROCTIME()) "
    "WITH ('connector'='datagen','number-of-rows'='3')"
)
VALUES_VIEW = "CREATE VIEW vv AS SELECT * FROM (VALUES ('a', 5), ('b', 3)) AS x(k, v)"


def _t_env(*statements: str, streaming: bool = True) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings)
    for statement in statements:
        t_env.execute_sql(statement)
    return t_env


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("SELECT nope FROM g", "From line 1, column 8 to line 1, column 11: Column 'nope' not found in any table"),
        ("SELECT id FROM missing", "From line 1, column 16 to line 1, column 22: Object 'missing' not found"),
        (
            "SELECT id, COUNT(*) FROM g",
            "From line 1, column 8 to line 1, column 9: Expression 'id' is not being grouped",
        ),
    ],
)
def test_validation_errors_carry_calcites_message_and_position(query: str, message: str) -> None:
    with pytest.raises(ValidationException) as raised:
        _t_env(GEN).explain_sql(query)
    assert str(raised.value) == f"SQL validation failed. {message}"
    assert isinstance(raised.value, FlowError)


def test_parse_errors_say_where() -> None:
    with pytest.raises(SqlParserException, match=r"^SQL parse failed\. .* at line 2, column \d+"):
        _t_env(GEN).explain_sql("SELECT id\nFROM g WHERE")


def test_a_connector_flowmagic_lacks_fails_when_read_with_flinks_wording_and_the_offer() -> None:
    t_env = _t_env("CREATE TABLE kk (a INT) WITH ('connector'='kafka')")  # Flink too accepts the DDL
    with pytest.raises(ValidationException) as raised:
        t_env.explain_sql("SELECT * FROM kk")
    assert str(raised.value) == (
        "Unable to create a source for reading table 'default_catalog.default_database.kk'.\n\n"
        "Table options are:\n\n'connector'='kafka'"
    )
    cause = raised.value.__cause__
    assert isinstance(cause, ValidationException)
    assert str(cause).startswith("Could not find any factory for identifier 'kafka'")
    assert raised.value.__notes__ == [
        "flowmagic has no 'kafka' connector; it offers blackhole, datagen, filesystem, print."
    ]


def test_unknown_datagen_options_are_named() -> None:
    t_env = _t_env("CREATE TABLE dd (a INT) WITH ('connector'='datagen','foo'='1')")
    with pytest.raises(ValidationException, match=r"^Unable to create a source for reading table") as raised:
        t_env.explain_sql("SELECT * FROM dd")
    assert re.search(r"(?s)Unsupported options found for 'datagen'.*foo", str(raised.value.__cause__))


def test_print_is_a_sink_only() -> None:
    t_env = _t_env("CREATE TABLE p (a INT) WITH ('connector'='print')")
    with pytest.raises(ValidationException, match="'print' can only be used as a sink"):
        t_env.explain_sql("SELECT * FROM p")


def test_describe_and_show_tables_as_flink_prints_them() -> None:
    t_env = _t_env(GEN, VALUES_VIEW)
    assert [tuple(row) for row in t_env.execute_sql("DESCRIBE g").collect()] == [
        ("id", "INT", True, "", "", ""),
        ("k", "STRING", True, "", "AS CAST(`id` AS STRING)", ""),
        ("ts", "TIMESTAMP_LTZ(3) *PROCTIME*", False, "", "AS PROCTIME()", ""),
    ]
    assert [tuple(row) for row in t_env.execute_sql("SHOW TABLES").collect()] == [("g",), ("vv",)]


def test_temporary_views_shadow_and_drop() -> None:
    t_env = _t_env(GEN, VALUES_VIEW, "CREATE TEMPORARY VIEW g AS SELECT 1 AS one FROM vv")
    assert t_env.sql_query("SELECT * FROM g").get_schema() == [("one", "INT NOT NULL")]
    t_env.execute_sql("DROP TEMPORARY VIEW g")
    assert [name for name, _ in t_env.sql_query("SELECT * FROM g").get_schema()] == ["id", "k", "ts"]
    t_env.execute_sql("DROP TABLE g")
    t_env.execute_sql("DROP TABLE IF EXISTS g")
    with pytest.raises(
        ValidationException, match=r"Table with identifier 'default_catalog\.default_database\.g' does not exist"
    ):
        t_env.execute_sql("DROP TABLE g")


def test_set_and_explain_statements() -> None:
    t_env = _t_env(VALUES_VIEW)
    t_env.execute_sql("SET 'table.exec.uid.generation' = 'ALWAYS'")
    assert t_env.get_config().get("table.exec.uid.generation") == "ALWAYS"
    query = "SELECT k, COUNT(*) AS c FROM vv GROUP BY k"
    [(text,)] = t_env.execute_sql(f"EXPLAIN CHANGELOG_MODE {query}").collect()
    assert text == t_env.explain_sql(query, ExplainDetail.CHANGELOG_MODE)
    assert "GroupAggregate(groupBy=[k], select=[k, COUNT(*) AS c], changelogMode=[I,UA])" in text
    assert t_env.sql_query(query).explain() == t_env.explain_sql(query)


def test_exec_node_ids_continue_in_a_session_and_restart_in_a_fresh_one() -> None:
    t_env = _t_env(VALUES_VIEW)
    query = "SELECT k, COUNT(*) AS c FROM vv GROUP BY k"
    first = [n.id for n in nodes(t_env.session.compile(query))]
    t_env.explain_sql(query)
    third = [n.id for n in nodes(t_env.session.compile(query))]
    # Values, the Calc reading only k, Exchange, GroupAggregate: four nodes per plan.
    assert first == [1, 2, 3, 4]
    assert third == [9, 10, 11, 12]
    assert [n.id for n in nodes(_t_env(VALUES_VIEW).session.compile(query))] == [1, 2, 3, 4]


def test_avg_is_reduced_only_when_its_sum_and_count_exist() -> None:
    t_env = _t_env(VALUES_VIEW)
    alone = t_env.explain_sql("SELECT k, AVG(v) FROM vv GROUP BY k")
    assert "GroupAggregate(groupBy=[k], select=[k, AVG(v) AS EXPR$1])" in alone
    shared = t_env.explain_sql("SELECT k, SUM(v), AVG(v), COUNT(*) FROM vv GROUP BY k")
    assert (
        "Calc(select=[k, EXPR$1, CAST(/(EXPR$1, $f2) AS INTEGER NOT NULL) AS EXPR$2, $f2 AS EXPR$3])\n"
        "+- GroupAggregate(groupBy=[k], select=[k, $SUM0(v) AS EXPR$1, COUNT(*) AS $f2])"
    ) in shared


def test_a_renaming_projection_disappears_from_the_physical_plan() -> None:
    text = _t_env(GEN).explain_sql("SELECT id AS x FROM g")
    assert text.endswith(
        "== Optimized Physical Plan ==\n"
        "TableSourceScan(table=[[default_catalog, default_database, g]], fields=[id])\n\n"
        "== Optimized Execution Plan ==\n"
        "TableSourceScan(table=[[default_catalog, default_database, g]], fields=[id])\n"
    )


def test_streaming_sort_needs_a_limit() -> None:
    with pytest.raises(TableException, match=r"Sort on a non-time-attribute field is not supported\."):
        _t_env(GEN).explain_sql("SELECT id FROM g ORDER BY id")


def test_stream_table_environment_over_a_flowmagic_environment() -> None:
    from flowmagic.datastream import StreamExecutionEnvironment
    from flowmagic.table import StreamTableEnvironment

    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment.get_execution_environment())
    t_env.execute_sql(VALUES_VIEW)
    assert "GroupAggregate(groupBy=[k], select=[k, COUNT(*) AS c])" in t_env.explain_sql(
        "SELECT k, COUNT(*) AS c FROM vv GROUP BY k"
    )
    batch = StreamTableEnvironment.create(environment_settings=EnvironmentSettings.in_batch_mode())
    batch.execute_sql(GEN)
    assert (
        batch.sql_query("SELECT id FROM g")
        .explain()
        .endswith("TableSourceScan(table=[[default_catalog, default_database, g]], fields=[id])\n")
    )
