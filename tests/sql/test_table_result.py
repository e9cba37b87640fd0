"""PyFlink's TableResult of queries and INSERTs run by flowmagic's SQL runtime (local executor):
collect() with row kinds, print(), wait(), the schema, statement sets, and the one-line
refusals of what does not run yet."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowmagic import FlowError
from flowmagic.table import EnvironmentSettings, ResultKind, TableEnvironment
from flowmagic.vocabulary.types import RowKind

VALUES = "CREATE VIEW src AS SELECT * FROM (VALUES (1), (2), (1)) AS t(num)"
SEQUENCE = (
    "CREATE TABLE seq (id INT) WITH ('connector' = 'datagen', 'number-of-rows' = '6', "
    "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '6')"
)


def _t_env(*statements: str, streaming: bool = True) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings)
    config = t_env.get_config()
    config.set("parallelism.default", "1")
    config.set("table.local-time-zone", "UTC")
    config.set("flowmagic.executor", "local")
    for statement in statements:
        t_env.execute_sql(statement)
    return t_env


def test_collect_gives_positional_rows_with_their_kinds_as_pyflink() -> None:
    result = _t_env(VALUES).execute_sql("SELECT num, COUNT(*) AS cnt FROM src GROUP BY num")
    with result.collect() as rows:
        collected = list(rows)
    # PyFlink 2.3's collect() makes each row as Row(*fields): printed positionally.
    assert repr(collected[0]) == "<Row(1, 1)>"
    changelog = [(row.get_row_kind(), row[0], row[1]) for row in collected]
    assert changelog == [
        (RowKind.INSERT, 1, 1),
        (RowKind.INSERT, 2, 1),
        (RowKind.UPDATE_BEFORE, 1, 1),
        (RowKind.UPDATE_AFTER, 1, 2),
    ]
    assert result.get_result_kind() == ResultKind.SUCCESS_WITH_CONTENT
    schema = result.get_table_schema()
    assert schema.get_field_names() == ["num", "cnt"]
    assert schema.get_field_data_types() == ["INT NOT NULL", "BIGINT NOT NULL"]
    assert result.get_job_client().get_job_status().name == "FINISHED"


def test_a_group_whose_last_row_is_retracted_is_deleted() -> None:
    # Counting keys per count: key 1 moves from count 1 to count 2, so the group of count 1
    # loses its last key (-D) before key 2 starts it again; one subtask keeps the order.
    t_env = _t_env("CREATE VIEW twice AS SELECT * FROM (VALUES (1), (1), (2)) AS t(num)")
    inner = "SELECT num, COUNT(*) AS c FROM twice GROUP BY num"
    rows = t_env.execute_sql(f"SELECT c, MAX(num) AS m FROM ({inner}) GROUP BY c").collect()
    assert [(row.get_row_kind().short_string, *row) for row in rows] == [
        ("+I", 1, 1),
        ("-D", 1, 1),
        ("+I", 2, 1),
        ("+I", 1, 2),
    ]


def test_an_unchanged_result_emits_nothing() -> None:
    # Key 1's second row moves it to count 2; retracting it from count 1 leaves that group's
    # MAX at 2, unchanged: Flink's GroupAggFunction emits nothing for it.
    t_env = _t_env(VALUES)
    inner = "SELECT num, COUNT(*) AS c FROM src GROUP BY num"
    rows = t_env.execute_sql(f"SELECT c, MAX(num) AS m FROM ({inner}) GROUP BY c").collect()
    assert [(row.get_row_kind().short_string, *row) for row in rows] == [
        ("+I", 1, 1),
        ("-U", 1, 1),
        ("+U", 1, 2),
        ("+I", 2, 1),
    ]


def test_with_a_state_ttl_an_unchanged_result_is_emitted_again() -> None:
    # GroupAggFunction refreshes a result downstream when state expires: -U/+U of equal rows.
    t_env = _t_env(VALUES)
    t_env.get_config().set("table.exec.state.ttl", "1 d")
    inner = "SELECT num, COUNT(*) AS c FROM src GROUP BY num"
    rows = t_env.execute_sql(f"SELECT c, MAX(num) AS m FROM ({inner}) GROUP BY c").collect()
    assert [(row.get_row_kind().short_string, *row) for row in rows] == [
        ("+I", 1, 1),
        ("-U", 1, 1),
        ("+U", 1, 2),
        ("-U", 1, 2),
        ("+U", 1, 2),
        ("+I", 2, 1),
    ]


def test_print_writes_flinks_tableau_in_both_modes(capsys: pytest.CaptureFixture[str]) -> None:
    # x is a DECIMAL(13, 1): 15 wide (its precision, a sign and a point), as Flink's tableau.
    _t_env(SEQUENCE).execute_sql("SELECT id, id * 1.5 AS x FROM seq WHERE id > 4").print()
    assert capsys.readouterr().out == (
        "+----+-------------+-----------------+\n"
        "| op |          id |               x |\n"
        "+----+-------------+-----------------+\n"
        "| +I |           5 |             7.5 |\n"
        "| +I |           6 |             9.0 |\n"
        "+----+-------------+-----------------+\n"
        "Received a total of 2 rows\n"
    )
    batch = _t_env(SEQUENCE, streaming=False)
    batch.execute_sql("SELECT id FROM seq WHERE id > 5").print()
    batch.execute_sql("SELECT id FROM seq WHERE id > 6").print()
    assert capsys.readouterr().out == "+----+\n| id |\n+----+\n|  6 |\n+----+\n1 row in set\nEmpty set\n"


def test_a_statement_set_runs_its_inserts_as_one_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t_env = _t_env(
        SEQUENCE,
        "CREATE TABLE shown (id INT) WITH ('connector' = 'print')",
        f"CREATE TABLE written (id INT, half DOUBLE) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
        "'format' = 'csv')",
    )
    statements = t_env.create_statement_set()
    statements.add_insert_sql("INSERT INTO shown SELECT id FROM seq WHERE id < 3")
    statements.add_insert_sql("INSERT INTO written SELECT id, id / 2.0e0 FROM seq WHERE id > 4")
    result = statements.execute()
    result.wait()
    assert result.get_job_client().monitor.job_name == (
        "insert-into_default_catalog.default_database.shown,default_catalog.default_database.written"
    )
    assert capsys.readouterr().out.splitlines() == ["+I[1]", "+I[2]"]
    lines = sorted(line for f in tmp_path.iterdir() if not f.name.startswith(".") for line in f.read_text().split())
    assert lines == ["5,2.5", "6,3.0"]


def test_table_execute_runs_the_query() -> None:
    t_env = _t_env(SEQUENCE)
    rows = list(t_env.sql_query("SELECT id FROM seq WHERE id = 3").execute().collect())
    assert [tuple(row) for row in rows] == [(3,)]


def test_a_processing_time_interval_join_runs() -> None:
    t_env = _t_env(SEQUENCE, "CREATE VIEW timed AS SELECT id, PROCTIME() AS pt FROM seq")
    query = (
        "SELECT a.id FROM timed AS a, timed AS b WHERE a.id = b.id AND a.pt BETWEEN b.pt - INTERVAL '1' HOUR AND b.pt"
    )
    assert "IntervalJoin(" in t_env.explain_sql(query)
    assert sorted(row[0] for row in t_env.execute_sql(query).collect()) == list(range(1, 7))


def test_a_failing_expression_names_the_operator_and_the_row() -> None:
    t_env = _t_env(SEQUENCE)
    with pytest.raises(FlowError) as raised:
        t_env.execute_sql("SELECT 10 / (id - 3) AS q FROM seq").wait()
    assert "/ by zero" in str(raised.value) and "Calc[" in str(raised.value) and "(3, 0)" in str(raised.value)


def test_a_csv_table_reads_quoted_fields_and_its_null_literal(tmp_path: Path) -> None:
    (tmp_path / "part-0.csv").write_text('1,"a, b",2.5\n2,null,null\n3,"say ""hi""",-1\n')
    t_env = _t_env(
        f"CREATE TABLE quoted (id INT, s STRING, d DOUBLE) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
        "'format' = 'csv', 'csv.null-literal' = 'null')"
    )
    rows = t_env.execute_sql("SELECT s, d, id FROM quoted").collect()
    assert sorted((tuple(row) for row in rows), key=lambda row: row[2]) == [
        ("a, b", 2.5, 1),
        (None, None, 2),
        ('say "hi"', -1.0, 3),
    ]


def test_collect_hands_timestamps_and_dates_out_as_pyflinks_python_values() -> None:
    # Recorded on PyFlink 2.3 (batch, collect()): <Row(1.1, datetime.datetime(2024, 1, 2, 3, 4,
    # 5, 123000), datetime.date(2024, 1, 2), datetime.date(2024, 1, 2), datetime.datetime(2024,
    # 1, 2, 0, 0), Decimal('1.50'))>.
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("flowmagic.executor", "local")
    query = (
        "SELECT CAST(1.1 AS FLOAT) AS f, TIMESTAMP '2024-01-02 03:04:05.123' AS ts, DATE '2024-01-02' AS d, "
        "CAST(TIMESTAMP '2024-01-02 23:04:05' AS DATE) AS td, CAST(DATE '2024-01-02' AS TIMESTAMP(3)) AS dt, "
        "CAST(1.5 AS DECIMAL(5,2)) AS dd"
    )
    with t_env.execute_sql(query).collect() as rows:
        [row] = list(rows)
    assert repr(row) == (
        "<Row(1.1, datetime.datetime(2024, 1, 2, 3, 4, 5, 123000), datetime.date(2024, 1, 2), "
        "datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 0, 0), Decimal('1.50'))>"
    )


def test_a_timestamp_literal_is_as_precise_as_its_fraction() -> None:
    # Flink 2.3's AST: ts=[2024-01-02 03:04:05.123:TIMESTAMP(3)], t0=[2024-01-02 23:04:05]
    # (a TIMESTAMP(0)), c=[2024-01-02 03:04:05:TIMESTAMP(6)] (a CAST's default precision).
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("flowmagic.executor", "local")
    query = (
        "SELECT TIMESTAMP '2024-01-02 03:04:05.123' AS ts, TIMESTAMP '2024-01-02 23:04:05' AS t0, "
        "CAST('2024-01-02 03:04:05' AS TIMESTAMP) AS c"
    )
    result = t_env.execute_sql(query)
    assert result.get_table_schema().get_field_data_types() == [
        "TIMESTAMP(3) NOT NULL",
        "TIMESTAMP(0) NOT NULL",
        "TIMESTAMP(6) NOT NULL",
    ]
    with result.collect() as rows:
        assert repr(list(rows)) == (
            "[<Row(datetime.datetime(2024, 1, 2, 3, 4, 5, 123000), datetime.datetime(2024, 1, 2, 23, 4, 5), "
            "datetime.datetime(2024, 1, 2, 3, 4, 5))>]"
        )
