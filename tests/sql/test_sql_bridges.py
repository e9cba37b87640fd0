"""StreamTableEnvironment's bridges from tables to DataStreams, against what PyFlink 2.3 did
(recorded/bridges_pyflink.json: the same rows from a DataStream view; here from VALUES)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import flowmagic
from flowmagic.sql.errors import TableException
from flowmagic.table import StreamTableEnvironment
from flowmagic.vocabulary.types import Row

RECORDED = json.loads((Path(__file__).parent / "recorded" / "bridges_pyflink.json").read_text())["stdout"]
VALUES = "(VALUES ('a', 1), ('b', 2), ('a', 3)) AS T(f0, f1)"


def _recorded(prefix: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in RECORDED if line.startswith(prefix + " ")]


def _printed(rows: list[Row]) -> list[str]:
    """Each row as the recorder printed it: its kind, str and repr."""
    return [f"{row.get_row_kind()} {row} {row!r}" for row in rows]


def _environment(executor: str) -> StreamTableEnvironment:
    t_env = StreamTableEnvironment.create(flowmagic.StreamExecutionEnvironment(parallelism=1))
    t_env.get_config().set("flowmagic.executor", executor)
    return t_env


@pytest.mark.parametrize("executor", ["local", "spark"])
def test_to_changelog_stream_gives_rows_with_their_kinds_as_flink(executor, request):
    if executor == "spark":
        request.getfixturevalue("spark")
    t_env = _environment(executor)
    table = t_env.sql_query(f"SELECT f0, SUM(f1) AS s FROM {VALUES} GROUP BY f0")
    stream = t_env.to_changelog_stream(table)
    with stream.execute_and_collect(executor=executor) as rows:
        assert _printed(list(rows)) == _recorded("ROW")


@pytest.mark.parametrize("executor", ["local", "spark"])
def test_to_data_stream_gives_an_insert_only_tables_rows(executor, request):
    if executor == "spark":
        request.getfixturevalue("spark")
    t_env = _environment(executor)
    table = t_env.sql_query(f"SELECT f0, f1 * 10 AS x FROM {VALUES} WHERE f1 > 1")
    with t_env.to_data_stream(table).execute_and_collect(executor=executor) as rows:
        assert _printed(list(rows)) == _recorded("ROW2")


def test_to_data_stream_refuses_an_updating_table_in_flinks_words():
    t_env = _environment("local")
    table = t_env.sql_query(f"SELECT f0, SUM(f1) AS s FROM {VALUES} GROUP BY f0")
    with pytest.raises(TableException) as raised:
        t_env.to_data_stream(table)
    (expected,) = _recorded("TO_DS_ERR")
    # Flink numbers anonymous tables with one counter per process: the number is the only difference.
    pattern = re.escape(expected.removeprefix("org.apache.flink.table.api.TableException: ")).replace(r"\$2", r"\$\d+")
    assert re.fullmatch(pattern, str(raised.value))


def test_an_unbounded_tables_changelog_stream_runs_in_the_continuous_mode(spark):
    t_env = _environment("spark")
    t_env.execute_sql(
        "CREATE TABLE src (k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '200', "
        "'fields.k.min' = '1', 'fields.k.max' = '3')"
    )
    stream = t_env.to_changelog_stream(t_env.sql_query("SELECT k, COUNT(*) AS c FROM src GROUP BY k"))
    counts: dict[int, int] = {}
    with stream.execute_and_collect() as rows:
        for row in rows:
            kind = str(row.get_row_kind())
            if kind in ("+I", "+U"):
                assert row.c == counts.get(row.k, 0) + 1, row
                counts[row.k] = row.c
            else:
                assert kind == "-U" and row.c == counts[row.k], row
            if sum(counts.values()) >= 15:
                break
    assert set(counts) <= {1, 2, 3}
