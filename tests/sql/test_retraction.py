"""Why does this query retract? The answer read from the planner's changelog modes, for the
seed query and for the other shapes that retract (Top-N, deduplication keeping the last row,
outer joins, aggregates over them) or do not (window aggregates, deduplication keeping the
first row, interval joins, batch mode), and what each sink takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowmagic.sql.errors import TableException
from flowmagic.sql.retraction import explain_retraction
from flowmagic.sql_pipeline import SqlPipeline
from flowmagic.table import EnvironmentSettings, TableEnvironment

SQL = Path(__file__).parents[1] / "conformance" / "sql"
DATA = SQL / "data"


def _case(name: str) -> str:
    return (SQL / "cases" / f"{name}.sql").read_text().replace("${SQL_DATA}", str(DATA))


def _why(script: str):
    pipeline = SqlPipeline("q", script)
    return explain_retraction(pipeline.plan.exec_root, streaming=pipeline.session.streaming)


SOURCES = (
    "CREATE TABLE a (k INT, v INT, ts AS PROCTIME()) WITH ('connector'='datagen','rows-per-second'='1');\n"
    "CREATE TABLE b (k INT, w INT) WITH ('connector'='datagen','rows-per-second'='1');\n"
)


def test_the_seed_query_retracts_from_its_group_aggregate() -> None:
    why = _why(_case("s01_seed_group_count"))
    assert why.retracts
    assert [origin.operator for origin in why.origins] == ["GroupAggregate[3]"]
    # The collected result takes -U, so the aggregate emits the old row before each update.
    assert why.result_kinds == ("+I", "-U", "+U")
    assert why.origins[0].description == "GroupAggregate(groupBy=[num], select=[num, COUNT(*) AS cnt])"
    assert why.sink.connector == "collect" and why.sink.accepts == ("+I", "-U", "+U", "-D")
    assert not why.sink_refuses
    text = str(why)
    assert text.startswith("Why does this query retract?\nThis query retracts: its result holds +I, -U, +U rows, ")
    assert "starting at GroupAggregate[3]." in text
    # The window aggregate is the rewrite, on the table it reads, which has no time attribute yet.
    assert "TABLE(TUMBLE(TABLE source_table, DESCRIPTOR(ts), INTERVAL '1' MINUTE))" in why.rewrites[0]
    assert "source_table has no time attribute yet" in why.rewrites[0]
    assert "GROUP BY window_start, window_end, num" in why.rewrites[0]
    page = why_html(why)
    assert "<b>GroupAggregate[3]</b> emits +I, -U, +U" in page and "<li>Aggregate per window instead" in page


def why_html(why) -> str:
    from flowmagic.widgets.sql_plans import retraction_html

    return retraction_html(why)


def test_insert_only_queries_say_they_never_retract() -> None:
    for case in ("s05_tumble_window", "s09_inner_join", "s10_interval_join", "s13_union_all", "s03_filter_projection"):
        why = _why(_case(case))
        assert not why.retracts, case
        assert why.origins == () and why.rewrites == (), case
        assert str(why).splitlines()[1] == "This query never retracts: every node of its plan emits inserts (+I) only."


def test_batch_mode_never_retracts() -> None:
    why = _why("SET 'execution.runtime-mode' = 'batch';\n" + _case("s02_group_count_values"))
    assert not why.retracts and not why.streaming
    assert "in batch mode its result is computed once" in str(why)


def test_top_n_and_deduplication_keeping_the_last_row_retract_keeping_the_first_does_not() -> None:
    top_n = _why(_case("s11_topn"))
    assert [origin.name for origin in top_n.origins] == ["Rank"]
    assert top_n.result_kinds == ("+I", "-U", "+U", "-D")
    assert top_n.rewrites[0].startswith("Rank per window (Window Top-N)")
    last = _why(_case("s12_dedup_keep_last"))
    assert [origin.name for origin in last.origins] == ["Deduplicate"]
    # The Calc above it forwards what it emits.
    assert last.carried_by == ("Calc[5]",)
    assert last.rewrites[0].startswith("Keep the first row instead (ORDER BY the time attribute ASC)")
    first = _why(
        SOURCES + "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS rn FROM a) "
        "WHERE rn = 1;"
    )
    assert not first.retracts


def test_an_aggregate_over_a_left_join_names_both_and_an_insert_only_sink_refuses_in_flinks_words() -> None:
    query = "SELECT a.k, COUNT(*) FROM a LEFT JOIN b ON a.k = b.k GROUP BY a.k;"
    why = _why(SOURCES + "CREATE TABLE out_t (k INT, c BIGINT) WITH ('connector'='print');\nINSERT INTO out_t " + query)
    assert [origin.name for origin in why.origins] == ["Join"]
    assert [origin.name for origin in why.later] == ["GroupAggregate"]
    assert "LEFT OUTER JOIN emits a row without a match padded with NULLs" in why.origins[0].reason
    # Both rewrites: the interval join for the join, the window aggregate for the aggregate.
    assert any(rewrite.startswith("Bound the join in time") for rewrite in why.rewrites)
    assert any(rewrite.startswith("Aggregate per window instead") for rewrite in why.rewrites)
    # A csv filesystem table takes inserts only: the planner refuses the statement, as Flink's.
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    for statement in [
        *SOURCES.splitlines(),
        "CREATE TABLE out_t (k INT, c BIGINT) WITH ('connector'='filesystem','path'='/tmp/never','format'='csv')",
    ]:
        t_env.execute_sql(statement.rstrip(";"))
    with pytest.raises(TableException) as refused:
        t_env.explain_sql("INSERT INTO out_t " + query.rstrip(";"))
    assert str(refused.value) == (
        "Table sink 'default_catalog.default_database.out_t' doesn't support "
        "consuming update and delete changes which is produced by node "
        "GroupAggregate(groupBy=[k], select=[k, COUNT_RETRACT(*) AS EXPR$1])"
    )


def test_a_blackhole_sink_takes_updates_without_their_old_row() -> None:
    why = _why(
        SOURCES + "CREATE TABLE out_t (k INT, c BIGINT) WITH ('connector'='blackhole');\n"
        "INSERT INTO out_t SELECT k, COUNT(*) FROM a GROUP BY k;"
    )
    assert why.result_kinds == ("+I", "+U") and why.sink.accepts == ("+I", "+U", "-D")
    assert not why.sink_refuses
    assert "table 'out_t' (blackhole)" in str(why)


def test_a_sql_cell_whose_sink_refuses_the_updates_says_why_the_query_retracts() -> None:
    # Flink's error names the node only; the cell adds where the updates start and the rewrites.
    script = (
        "CREATE TABLE src (k INT) WITH ('connector'='datagen','number-of-rows'='10');\n"
        "CREATE TABLE per_key (k INT, c BIGINT) WITH ('connector'='filesystem','path'='/tmp/never','format'='csv');\n"
        "INSERT INTO per_key SELECT k, COUNT(*) FROM src GROUP BY k;"
    )
    with pytest.raises(TableException) as refused:
        SqlPipeline("refused", script)
    assert str(refused.value) == (
        "Table sink 'default_catalog.default_database.per_key' doesn't support consuming update changes which "
        "is produced by node GroupAggregate(groupBy=[k], select=[k, COUNT(*) AS EXPR$1])\n"
        "(the statement at line 3 of the script)"
    )
    [note] = refused.value.__notes__
    lines = note.splitlines()
    assert lines[:2] == [
        "Why does this query retract?",
        "This query retracts: its result holds +I, -U, +U rows, starting at GroupAggregate[3].",
    ]
    assert "To get inserts only:" in lines
    assert any(line.startswith("  - Aggregate per window instead") for line in lines)
    # What the sink takes is Flink's error's business, not the note's (the query was planned alone).
    assert not any(line.startswith("The sink,") for line in lines)
