"""Unbounded SQL in the continuous mode, on real Spark: rows streamed as epochs complete,
savepoint-edit-restore of a GROUP BY (aggregates go on from their saved values)."""

from __future__ import annotations

import contextlib
import io
import threading
from collections import defaultdict
from pathlib import Path

import pytest
from continuous_support import wait_for

from flowmagic.runtime.continuous.restore_check import read_snapshot
from flowmagic.runtime.continuous.storage import Storage
from flowmagic.sql_pipeline import SqlPipeline
from flowmagic.table import StreamTableEnvironment
from flowmagic.vocabulary.types import RowKind

pytestmark = pytest.mark.usefixtures("spark")

# A third column makes the planner project (a Calc chained to the source) with or without a
# WHERE: the JobGraph's shape, hence every operator ID, stays the same across the edit.
DDL = """CREATE TABLE src (k INT, v INT, note STRING) WITH (
  'connector' = 'datagen', 'rows-per-second' = '300',
  'fields.k.min' = '1', 'fields.k.max' = '4', 'fields.v.min' = '1', 'fields.v.max' = '10',
  'fields.note.length' = '3')"""
QUERY = "SELECT k, COUNT(*) AS c, SUM(v) AS s FROM src GROUP BY k"
EDITED = "SELECT k, COUNT(*) AS c, SUM(v) AS s FROM src WHERE v > 5 GROUP BY k"


def _environment(**options: str) -> StreamTableEnvironment:
    t_env = StreamTableEnvironment.create()
    config = t_env.get_config()
    config.set("execution.checkpointing.interval", "1 s")
    for key, value in options.items():
        config.set(key, value)
    t_env.execute_sql(DDL)
    return t_env


def _take(rows, count: int) -> list:
    taken = []
    for row in rows:
        taken.append(row)
        if len(taken) >= count:
            break
    return taken


def _check_changelog(rows: list, last: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Each key's -U retracts exactly its previous row, and its +U follows; returns each
    key's latest (count, sum)."""
    last = dict(last)
    retracted: dict[int, tuple[int, int]] = {}
    for row in rows:
        kind, (k, c, s) = row.get_row_kind(), tuple(row)
        if kind is RowKind.INSERT:
            assert k not in last, f"a second +I for key {k}: {row}"
            last[k] = (c, s)
        elif kind is RowKind.UPDATE_BEFORE:
            assert last.get(k) == (c, s), f"-U of key {k} retracts {(c, s)}, its row was {last.get(k)}"
            retracted[k] = (c, s)
        else:
            assert kind is RowKind.UPDATE_AFTER and k in retracted, f"unexpected {kind} {row}"
            del retracted[k]
            last[k] = (c, s)
    return last


def _source_offset(savepoint: str) -> int:
    manifest, _storage = read_snapshot(savepoint, Storage)
    offsets = [state.source["offset"] for state in manifest.operators.values() if state.source]
    assert len(offsets) == 1, manifest.operators
    return offsets[0]


def _generated(first: int, last: int) -> list[tuple[int, int]]:
    """(k, v) of datagen rows ``first``..``last - 1``, as the job's source made them."""
    from flowmagic.graph.operator_params import DatagenSourceParams
    from flowmagic.runtime.connectors.factories import Column, TableContext
    from flowmagic.runtime.connectors.sources import DatagenSource

    options = {
        "connector": "datagen",
        "rows-per-second": "300",
        "fields.k.min": "1",
        "fields.k.max": "4",
        "fields.v.min": "1",
        "fields.v.max": "10",
        "fields.note.length": "3",
    }
    table = TableContext("src", (Column("k", "INT"), Column("v", "INT"), Column("note", "STRING")), options)
    params = DatagenSource.create_source(table).operator.params
    assert isinstance(params, DatagenSourceParams)
    return [row[:2] for row in params.generator.tuples(first, last, params.seed)]


def test_an_unbounded_query_streams_its_changelog_as_epochs_complete_and_closing_cancels_it():
    t_env = _environment()
    result = t_env.execute_sql(QUERY)
    client = result.get_job_client()
    with result.collect() as rows:
        taken = _take(rows, 30)
        assert client.get_job_status().name == "RUNNING"
    assert len(taken) == 30
    _check_changelog(taken, {})
    assert {row.get_row_kind() for row in taken} >= {RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER}
    client.wait(120)
    assert client.get_job_status().name == "CANCELED"


def test_stop_with_savepoint_edit_the_filter_restore_and_the_aggregates_go_on_from_their_saved_values(tmp_path):
    first = _environment()
    result = first.execute_sql(QUERY)
    rows = result.collect()
    before = _take(rows, 20)
    savepoint = result.get_job_client().stop_with_savepoint(False, str(tmp_path / "sp1"))
    before += list(rows)  # the rows of the epochs up to the savepoint
    saved = _check_changelog(before, {})
    read_before = _source_offset(savepoint)

    # %flow check: the edited query's operators all find their state in the savepoint.
    edited = SqlPipeline("edited", f"{DDL};\n{EDITED};")
    check = edited.check_restore(savepoint)
    verdicts = {operator.label: operator.verdict.value for operator in check.operators}
    assert not check.refused, verdicts
    aggregate = [name for name in verdicts if name.startswith("GroupAggregate")]
    source = [name for name in verdicts if name.startswith("Source: src")]
    assert [verdicts[name] for name in aggregate + source] == ["restored", "restored"], verdicts

    second = _environment(**{"execution.savepoint.path": savepoint})
    result = second.execute_sql(EDITED)
    rows = result.collect()
    after = _take(rows, 12)
    final = result.get_job_client().stop_with_savepoint(False, str(tmp_path / "sp2"))
    after += list(rows)
    # No key starts afresh: each one's first row retracts the value it had when saved.
    latest = _check_changelog(after, saved)
    read_after = _source_offset(final)
    assert read_after > read_before

    # Exactly once: the aggregates are those of every row read, once, under each query.
    expected: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for k, v in _generated(0, read_before):
        expected[k][0] += 1
        expected[k][1] += v
    assert {k: tuple(e) for k, e in expected.items()} == saved
    for k, v in _generated(read_before, read_after):
        if v > 5:
            expected[k][0] += 1
            expected[k][1] += v
    assert {k: tuple(e) for k, e in expected.items()} == latest


def test_insert_into_filesystem_from_an_unbounded_query_commits_each_row_once_per_checkpoint(tmp_path):
    out = tmp_path / "out"
    t_env = _environment()
    t_env.execute_sql(
        f"CREATE TABLE out_table (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv')"
    )
    result = t_env.execute_sql("INSERT INTO out_table SELECT k, v FROM src WHERE v > 5")
    job = result.get_job_client()

    def committed() -> list[Path]:
        return [p for p in out.glob("part-*")] if out.exists() else []

    wait_for(lambda: len(committed()) >= 2, job, timeout=240)
    # Files appear only committed: nothing in progress is visible under its final name.
    assert all(not p.name.startswith(".") for p in committed())
    savepoint = job.stop_with_savepoint(False, str(tmp_path / "sp"))
    assert job.get_job_status().name == "FINISHED"
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "left in progress"
    written = [tuple(int(f) for f in line.split(",")) for p in committed() for line in p.read_text().splitlines()]
    expected = [(k, v) for k, v in _generated(0, _source_offset(savepoint)) if v > 5]
    assert sorted(written) == sorted(expected)
    assert len(written) == len(expected)  # every row once


def test_datagen_rows_are_made_from_their_offsets_alone_within_the_columns_bounds():
    rows = _generated(0, 2000)
    assert rows[700:1300] == _generated(700, 1300)  # a replayed range makes the same rows
    assert {k for k, _v in rows} == {1, 2, 3, 4}
    assert {v for _k, v in rows} == set(range(1, 11))


def _operator_ids(script: str) -> dict[str, str]:
    graph = SqlPipeline("ids", script).execution_graph
    return {
        graph.job_graph.stream_graph.nodes[node_id].name: pair.generated
        for vertex in graph.job_graph.vertices.values()
        for node_id, pair in zip(vertex.chain, vertex.operator_ids[::-1], strict=True)
    }


def test_operator_ids_follow_the_plans_shape_as_flinks_plan_only_uid_generation():
    # A query that already projects (a Calc) keeps every operator ID when its filter changes.
    assert _operator_ids(f"{DDL};\n{QUERY};") == _operator_ids(f"{DDL};\n{EDITED};")
    # Without a Calc, the first WHERE adds one to the source's chain: the IDs of the source and of
    # every operator after it change, so a restore finds none of their state.
    ddl = DDL.replace(", note STRING", "").replace(",\n  'fields.note.length' = '3'", "")
    before, after = _operator_ids(f"{ddl};\n{QUERY};"), _operator_ids(f"{ddl};\n{EDITED};")
    assert "Calc[2]" not in before and "Calc[2]" in after
    assert before["Source: src[1]"] != after["Source: src[1]"]
    assert before["GroupAggregate[3]"] != after["GroupAggregate[4]"]


def test_a_datagen_table_is_unbounded_without_a_row_count_or_a_sequence_field():
    sequence = DDL.replace(
        "'fields.note.length' = '3'", "'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '9'"
    ).replace("'fields.k.min' = '1', 'fields.k.max' = '4', ", "")
    assert SqlPipeline("unbounded", f"{DDL};\n{QUERY};").is_unbounded
    assert not SqlPipeline("sequence", f"{sequence};\n{QUERY};").is_unbounded


def test_print_of_an_unbounded_query_shows_rows_as_they_come_until_the_job_is_cancelled():
    result = _environment().execute_sql(QUERY)
    printed = io.StringIO()

    def cancel_after_some_rows() -> None:
        wait_for(lambda: printed.getvalue().count("\n") >= 3 + 6, result.get_job_client(), timeout=240)
        result.get_job_client().cancel()

    canceller = threading.Thread(target=cancel_after_some_rows)
    canceller.start()
    with contextlib.redirect_stdout(printed):
        result.print()
    canceller.join()
    lines = printed.getvalue().splitlines()
    assert lines[1].split() == ["|", "op", "|", "k", "|", "c", "|", "s", "|"]
    rows = lines[3:-2]
    assert len(rows) >= 6 and all(line.split()[1] in ("+I", "-U", "+U") for line in rows)
    assert lines[-2] == lines[0] and lines[-1] == f"Received a total of {len(rows)} rows"
    assert result.get_job_client().get_job_status().name == "CANCELED"
