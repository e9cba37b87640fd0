"""Flink's processing-time interval join (``ProcTimeIntervalJoin``): a row joins the other
side's rows that arrived within the bounds of it, by processing time; each side's rows are
dropped by cleanup timers once no row can join them any more, an outer side's unmatched rows
then emitted NULL-padded. The operator is the runtime's own, made from the spec the planner
generated for a real query, its processing time set by the tests."""

from __future__ import annotations

import pytest
from sql_operator_support import SqlOperatorUnderTest

from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.sql.operator import INSERT
from flowmagic.table import StreamTableEnvironment
from flowmagic.vocabulary.types import RowKind

LEFT, RIGHT = 1, 2
VIEWS = [
    "CREATE VIEW l AS SELECT k, v, PROCTIME() AS pt FROM (VALUES (1, 'x')) AS t(k, v)",
    "CREATE VIEW r AS SELECT k, w, PROCTIME() AS pt FROM (VALUES (1, 'y')) AS t(k, w)",
]
# A right row may arrive from 2 s before a left row to 1 s after it.
BOUNDS = "l.k = r.k AND r.pt BETWEEN l.pt - INTERVAL '2' SECOND AND l.pt + INTERVAL '1' SECOND"


def _join(join_type: str = "") -> SqlOperatorUnderTest:
    query = f"SELECT * FROM l {join_type} JOIN r ON {BOUNDS}"
    return SqlOperatorUnderTest(VIEWS, query, OperatorKind.SQL_INTERVAL_JOIN)


def test_rows_join_the_other_sides_rows_that_arrived_within_the_bounds() -> None:
    join = _join()
    assert join.feed(0, (1, "x", 0, INSERT), LEFT) == []
    assert join.feed(1_000, (1, "y", 1_000, INSERT), RIGHT) == [(1, "x", 0, 1, "y", 1_000, INSERT)]
    # 1.5 s after the left row: beyond its upper bound (and the row is dropped).
    assert join.feed(1_500, (1, "y2", 1_500, INSERT), RIGHT) == []
    # 2.4 s after the right row of 1 s (too late for it), 1.9 s after the one of 1.5 s.
    assert join.feed(3_400, (1, "x2", 3_400, INSERT), LEFT) == [(1, "x2", 3_400, 1, "y2", 1_500, INSERT)]
    # 2.1 s after the right row of 1.5 s: beyond its lower bound.
    assert join.feed(3_600, (1, "x3", 3_600, INSERT), LEFT) == []


def test_an_outer_row_without_a_match_comes_null_padded_when_its_cleanup_timer_fires() -> None:
    join = _join("LEFT")
    assert join.feed(0, (1, "x", 0, INSERT), LEFT) == []
    # Its cleanup timer: its time, plus how long right rows may come after it (1 s), plus half
    # the bounds' span (1.5 s), plus 1 ms.
    assert join.advance(2_500) == []
    assert join.advance(2_501) == [(1, "x", 0, None, None, None, INSERT)]
    assert join.advance(60_000) == []


def test_a_restored_join_keeps_its_rows_and_cleanup_timers() -> None:
    join = _join("FULL")
    join.feed(0, (1, "x", 0, INSERT), LEFT)
    join.feed(500, (1, "y", 500, INSERT), RIGHT)
    join.feed(4_000, (1, "z", 4_000, INSERT), RIGHT)
    join.restored(4_100)
    assert join.feed(4_200, (1, "x2", 4_200, INSERT), LEFT) == [(1, "x2", 4_200, 1, "z", 4_000, INSERT)]
    # The right row of 4 s joined; the left row of 4.2 s did too: nothing is padded at the end.
    assert join.advance(20_000) == []
    join.feed(30_000, (1, "w", 30_000, INSERT), RIGHT)
    assert join.advance(40_000) == [(None, None, None, 1, "w", 30_000, INSERT)]


@pytest.mark.usefixtures("spark")
def test_it_runs_in_the_continuous_mode_joining_rows_of_each_epoch_and_the_ones_before() -> None:
    t_env = StreamTableEnvironment.create()
    t_env.get_config().set("execution.checkpointing.interval", "1 s")
    t_env.execute_sql(
        "CREATE TABLE src (k INT, v INT, pt AS PROCTIME()) WITH ('connector' = 'datagen', "
        "'rows-per-second' = '20', 'fields.k.min' = '1', 'fields.k.max' = '3')"
    )
    query = (
        "SELECT a.k, b.k, a.v, b.v FROM src AS a JOIN src AS b "
        "ON a.k = b.k AND a.pt BETWEEN b.pt - INTERVAL '1' HOUR AND b.pt + INTERVAL '1' HOUR"
    )
    result = t_env.execute_sql(query)
    with result.collect() as rows:
        taken = []
        for row in rows:
            taken.append(row)
            if len(taken) >= 40:
                break
    assert all(row.get_row_kind() is RowKind.INSERT and row[0] == row[1] for row in taken)
    # Many rows of the source joined, not one pair repeated.
    assert len({(row[0], row[2]) for row in taken}) > 1
    result.get_job_client().wait(120)
