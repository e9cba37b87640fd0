"""State retention (``table.exec.state.ttl``) of the regular join, Top-N and deduplication:
Flink's ``StateConfigUtil.createTtlConfig`` (processing time, renewed on create and write,
expired state never read). The operators are the runtime's own, made from the specs the planner
generated for real queries, and read processing time from a clock these tests move forward.
"""

from __future__ import annotations

from sql_operator_support import SqlOperatorUnderTest

from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.sql.operator import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE

LEFT, RIGHT = 1, 2
VIEWS = [
    "CREATE VIEW a AS SELECT * FROM (VALUES (1, 'x')) AS t(k, v)",
    "CREATE VIEW b AS SELECT * FROM (VALUES (1, 'y')) AS t(k, w)",
    "CREATE VIEW p AS SELECT k, v, PROCTIME() AS pt FROM (VALUES ('a', 1)) AS t(k, v)",
    # Two rows of one (k, item): an aggregate over them stays (over rows unique on its keys Flink removes it).
    "CREATE VIEW s AS SELECT * FROM (VALUES ('a', 'x', 1), ('a', 'x', 2)) AS t(k, item, v)",
]

TOP_2 = "SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM {}"


def _operator(query: str, kind: OperatorKind, ttl: str | None = "10 s") -> SqlOperatorUnderTest:
    """The operator of ``kind`` in the plan of ``query``, with a state TTL of ``ttl``."""
    options = {} if ttl is None else {"table.exec.state.ttl": ttl}
    return SqlOperatorUnderTest(VIEWS, query, kind, **options)


def test_a_joined_row_expires_ten_seconds_after_it_was_written() -> None:
    join = _operator("SELECT * FROM a JOIN b ON a.k = b.k", OperatorKind.SQL_JOIN)
    assert join.feed(0, (1, "y", INSERT), RIGHT) == []
    assert join.feed(9_999, (1, "x", INSERT), LEFT) == [(1, "x", 1, "y", INSERT)]
    # b's row was written at 0: gone at 10 s; a's row (written at 9.999 s) still joins.
    assert join.feed(10_000, (1, "x2", INSERT), LEFT) == []
    assert join.feed(19_998, (1, "y2", INSERT), RIGHT) == [(1, "x", 1, "y2", INSERT), (1, "x2", 1, "y2", INSERT)]
    # A retraction of a forgotten row is still joined with the other side's live rows (x
    # expired at 19.999 s, x2 lives until 20 s).
    assert join.feed(19_999, (1, "y", DELETE), RIGHT) == [(1, "x2", 1, "y", DELETE)]


def test_without_a_ttl_a_joined_row_is_kept() -> None:
    join = _operator("SELECT * FROM a JOIN b ON a.k = b.k", OperatorKind.SQL_JOIN, ttl=None)
    join.feed(0, (1, "y", INSERT), RIGHT)
    assert join.feed(10**9, (1, "x", INSERT), LEFT) == [(1, "x", 1, "y", INSERT)]


def test_an_outer_row_lives_from_its_last_match_and_pads_nulls_once_its_matches_expired() -> None:
    join = _operator("SELECT * FROM a LEFT JOIN b ON a.k = b.k", OperatorKind.SQL_JOIN)
    assert join.feed(0, (1, "x", INSERT), LEFT) == [(1, "x", None, None, INSERT)]
    # The match at 5 s writes the left row's association count: it lives until 15 s.
    assert join.feed(5_000, (1, "y", INSERT), RIGHT) == [(1, "x", None, None, DELETE), (1, "x", 1, "y", INSERT)]
    assert join.feed(14_000, (1, "y2", INSERT), RIGHT) == [(1, "x", 1, "y2", INSERT)]
    # At 16 s the right row of 5 s expired; the left row (written at 14 s) remains. Its
    # retraction finds only the right row of 14 s.
    assert join.feed(16_000, (1, "x", DELETE), LEFT) == [(1, "x", 1, "y2", DELETE)]
    # At 30 s everything expired: the retraction of the left row comes NULL-padded, as Flink's.
    join.feed(20_000, (1, "x", INSERT), LEFT)
    assert join.feed(30_000, (1, "x", DELETE), LEFT) == [(1, "x", None, None, DELETE)]


def test_expired_join_rows_stay_out_of_snapshots_and_restored_rows_keep_their_times() -> None:
    join = _operator("SELECT * FROM a JOIN b ON a.k = b.k", OperatorKind.SQL_JOIN)
    join.feed(0, (1, "y", INSERT), RIGHT)
    join.feed(6_000, (1, "y2", INSERT), RIGHT)
    join.restored(12_000)
    assert join.feed(12_000, (1, "x", INSERT), LEFT) == [(1, "x", 1, "y2", INSERT)]
    assert join.feed(16_000, (1, "x2", INSERT), LEFT) == []
    join.restored(40_000)
    assert join.operator.snapshot_keyed() == {}


def test_deduplication_keeping_the_first_row_starts_again_once_its_state_expired() -> None:
    query = "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt) AS rn FROM p) WHERE rn = 1"
    dedup = _operator(query, OperatorKind.SQL_DEDUPLICATE)
    assert dedup.feed(0, ("a", 1, None, INSERT)) == [("a", 1, None, INSERT)]
    # A dropped row writes nothing: the state still expires 10 s after the first row.
    assert dedup.feed(9_000, ("a", 2, None, INSERT)) == []
    assert dedup.feed(10_000, ("a", 3, None, INSERT)) == [("a", 3, None, INSERT)]


def test_deduplication_keeping_the_last_row_sends_an_insert_after_expiry() -> None:
    query = "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt DESC) AS rn FROM p) WHERE rn = 1"
    dedup = _operator(query, OperatorKind.SQL_DEDUPLICATE)
    assert dedup.feed(0, ("a", 1, None, INSERT)) == [("a", 1, None, INSERT)]
    assert dedup.feed(5_000, ("a", 2, None, INSERT)) == [("a", 1, None, UPDATE_BEFORE), ("a", 2, None, UPDATE_AFTER)]
    # With a TTL a row equal to the kept one is sent too (it renews the state downstream).
    assert dedup.feed(6_000, ("a", 2, None, INSERT)) == [("a", 2, None, UPDATE_BEFORE), ("a", 2, None, UPDATE_AFTER)]
    assert dedup.feed(16_000, ("a", 3, None, INSERT)) == [("a", 3, None, INSERT)]


def test_append_only_top_n_forgets_rows_ten_seconds_after_their_sort_key_was_written() -> None:
    query = f"SELECT k, v, rn FROM ({TOP_2.format('s')}) WHERE rn <= 2"
    rank = _operator(query, OperatorKind.SQL_RANK)
    assert rank.feed(0, ("a", "x", 5, INSERT)) == [("a", "x", 5, 1, INSERT)]
    assert rank.feed(4_000, ("a", "y", 3, INSERT)) == [("a", "y", 3, 2, INSERT)]
    # At 10 s the row of sort key 5 is gone: 4 takes rank 1 (Flink's buffer has only 3 left).
    assert rank.feed(10_000, ("a", "z", 4, INSERT)) == [
        ("a", "y", 3, 1, UPDATE_BEFORE),
        ("a", "z", 4, 1, UPDATE_AFTER),
        ("a", "y", 3, 2, INSERT),
    ]
    # At 14 s the row of sort key 3 (written at 4 s) is gone too: 1 comes in second.
    assert rank.feed(14_000, ("a", "w", 1, INSERT)) == [("a", "w", 1, 2, INSERT)]


def test_retracting_top_n_forgets_expired_rows_and_their_retractions() -> None:
    inner = "SELECT k, item, SUM(v) AS v FROM s GROUP BY k, item"
    query = f"SELECT k, item, v, rn FROM ({TOP_2.format(f'({inner})')}) WHERE rn <= 2"
    rank = _operator(query, OperatorKind.SQL_RANK)
    assert rank.feed(0, ("a", "x", 5, INSERT)) == [("a", "x", 5, 1, INSERT)]
    assert rank.feed(8_000, ("a", "y", 3, INSERT)) == [("a", "y", 3, 2, INSERT)]
    # x's row expired at 10 s: its retraction retracts nothing, its update enters as new.
    assert rank.feed(12_000, ("a", "x", 5, UPDATE_BEFORE)) == []
    assert rank.feed(12_000, ("a", "x", 9, UPDATE_AFTER)) == [
        ("a", "y", 3, 1, UPDATE_BEFORE),
        ("a", "x", 9, 1, UPDATE_AFTER),
        ("a", "y", 3, 2, INSERT),
    ]
    # The sort keys' list was written at 12 s; y's rows (written at 8 s) are gone at 18 s.
    assert rank.feed(18_000, ("a", "z", 1, INSERT)) == [("a", "z", 1, 2, INSERT)]
