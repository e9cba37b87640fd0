"""The stateful SQL operators keep everything that decides their output in the keyed state
backend under Flink's state names, and their timers in the timer service: an operator
restored from a snapshot (pickled, as checkpoints store it) halfway through its input emits
exactly what the operator that ran on emits. The operators are the runtime's own, made from the
specs the planner generated for a real query; rows and watermarks are fed as a subtask would.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest

from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.transformations import Transformation
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.records import MAX_WATERMARK
from flowmagic.runtime.registry import implementation
from flowmagic.runtime.sql.operator import INSERT, UPDATE_AFTER, UPDATE_BEFORE
from flowmagic.table import EnvironmentSettings, TableEnvironment

TASK = TaskInfo("test", 0, 1, 128, 0, batch=False)

EVENTS = """CREATE TABLE events (k STRING, v INT, t BIGINT, ts AS TO_TIMESTAMP_LTZ(t, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = '/x', 'format' = 'csv')"""
ORDERS = """CREATE VIEW orders AS SELECT * FROM (VALUES (1, 10, 100)) AS o(order_id, cust_id, amount)"""
CUSTOMERS = """CREATE VIEW customers AS SELECT * FROM (VALUES (10, 'alice')) AS c(cust_id, name)"""
SHIPMENTS = """CREATE TABLE shipments (sid INT, oid INT, t BIGINT, ts AS TO_TIMESTAMP_LTZ(t, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = '/y', 'format' = 'csv')"""
# Two rows of one (k, item): the aggregate stays (over rows unique on its keys Flink removes it).
ITEMS = """CREATE VIEW items AS SELECT * FROM (VALUES ('a', 'x', 1), ('a', 'x', 2)) AS x(k, item, v)"""


def _operators(setup: list[str], query: str, kinds: tuple[OperatorKind, ...]) -> list[Callable[[], Operator]]:
    """Factories of the runtime operators of ``kinds`` in the plan of ``query``, inputs first."""
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    for statement in setup:
        t_env.execute_sql(statement)
    plan = t_env.session.translate(query)
    found: list[Transformation] = []
    seen: set[int] = set()

    def visit(t: Transformation) -> None:
        if t.id in seen:
            return
        seen.add(t.id)
        for child in t.inputs:
            visit(child)
        operator = getattr(t, "operator", None)
        if operator is not None and operator.kind in kinds:
            found.append(t)

    visit(plan.translation.sink)
    specs = [t.operator for t in found]  # type: ignore[attr-defined]
    assert [s.kind for s in specs] == list(kinds)
    return [lambda t=t, s=s: implementation(s.kind)(t.name, s.params, TASK) for t, s in zip(found, specs, strict=True)]


class _Pipeline:
    """Operators chained in a row, the last one's rows collected."""

    def __init__(self, factories: list[Callable[[], Operator]]):
        self.operators = [make() for make in factories]
        self.out: list[tuple[Any, ...]] = []
        for upstream, downstream in zip(self.operators, self.operators[1:], strict=False):
            upstream.output.targets.append(lambda value, ts, d=downstream: d.process(value, ts))
            upstream.output.batch_targets.append(downstream.process_batch)
            upstream.output.watermark_targets.append(downstream.process_watermark)
        last = self.operators[-1]
        last.output.targets.append(lambda value, ts: self.out.append(value))
        last.output.batch_targets.append(self.out.extend)
        for operator in self.operators:
            operator.output.seal()
            operator.open()

    def feed(self, item: Any) -> None:
        head = self.operators[0]
        if isinstance(item, int):
            head.process_watermark(item)
        else:
            side, row = item
            head.process(row, None, side)

    def snapshot(self) -> bytes:
        for operator in self.operators:
            operator.prepare_snapshot(True)
        return pickle.dumps([op.snapshot_keyed() for op in self.operators])

    def restore(self, snapshot: bytes) -> None:
        for operator, entries in zip(self.operators, pickle.loads(snapshot), strict=True):
            operator.restore_keyed(entries)


def _run_restored(factories: list[Callable[[], Operator]], inputs: list[Any], split: int) -> list[Any]:
    first = _Pipeline(factories)
    for item in inputs[:split]:
        first.feed(item)
    snapshot = first.snapshot()
    second = _Pipeline(factories)
    second.restore(snapshot)
    for item in inputs[split:]:
        second.feed(item)
    return first.out + second.out


def _state_names(factories: list[Callable[[], Operator]], inputs: list[Any]) -> set[str]:
    pipeline = _Pipeline(factories)
    for item in inputs:
        if not isinstance(item, int):
            pipeline.feed(item)
    for operator in pipeline.operators:
        operator.prepare_snapshot(True)
    return {name for op in pipeline.operators for states in op.snapshot_keyed().values() for name in states}


S = 1000
CASES: dict[str, tuple[list[str], str, tuple[OperatorKind, ...], list[Any], set[str]]] = {
    "tumble two-phase": (
        [EVENTS],
        "SELECT window_start, k, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), "
        "INTERVAL '5' SECOND)) GROUP BY window_start, window_end, k",
        (OperatorKind.SQL_LOCAL_WINDOW_AGGREGATE, OperatorKind.SQL_GLOBAL_WINDOW_AGGREGATE),
        [
            (0, ("a", 1, 1 * S, INSERT)),
            (0, ("b", 2, 2 * S, INSERT)),
            (0, ("a", 3, 6 * S, INSERT)),
            5 * S,
            (0, ("a", 4, 7 * S, INSERT)),
            (0, ("b", 5, 8 * S, INSERT)),
            (0, ("a", 6, 12 * S, INSERT)),
            11 * S,
            MAX_WATERMARK,
        ],
        {"value:window-aggs", "@timers"},
    ),
    "hop": (
        [EVENTS],
        "SELECT window_end, k, MAX(v) FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '2' SECOND, "
        "INTERVAL '6' SECOND)) GROUP BY window_start, window_end, k",
        (OperatorKind.SQL_LOCAL_WINDOW_AGGREGATE, OperatorKind.SQL_GLOBAL_WINDOW_AGGREGATE),
        [
            (0, ("a", 1, 1 * S, INSERT)),
            (0, ("a", 7, 3 * S, INSERT)),
            2 * S,
            (0, ("a", 2, 5 * S, INSERT)),
            6 * S,
            (0, ("a", 3, 9 * S, INSERT)),
            MAX_WATERMARK,
        ],
        {"value:window-aggs", "@timers"},
    ),
    "session": (
        [EVENTS],
        "SELECT window_start, window_end, k, COUNT(*) FROM TABLE(SESSION(TABLE events PARTITION BY k, "
        "DESCRIPTOR(ts), INTERVAL '3' SECOND)) GROUP BY window_start, window_end, k",
        (OperatorKind.SQL_WINDOW_AGGREGATE,),
        [
            (0, ("a", 1, 1 * S, INSERT)),
            (0, ("a", 2, 8 * S, INSERT)),
            (0, ("a", 3, 5 * S, INSERT)),
            2 * S,
            (0, ("b", 4, 2 * S, INSERT)),
            (0, ("a", 5, 20 * S, INSERT)),
            15 * S,
            MAX_WATERMARK,
        ],
        {"value:window-aggs", "@timers"},
    ),
    "left join": (
        [ORDERS, CUSTOMERS],
        "SELECT o.order_id, c.name FROM orders AS o LEFT JOIN customers AS c ON o.cust_id = c.cust_id",
        (OperatorKind.SQL_JOIN,),
        [
            (1, (1, 10, 100, INSERT)),
            (1, (2, 20, 250, INSERT)),
            (2, (10, "alice", INSERT)),
            (1, (3, 10, 75, INSERT)),
            (2, (20, "bob", INSERT)),
            (2, (10, "alice", UPDATE_BEFORE)),
        ],
        {"map:left-records", "map:right-records"},
    ),
    "interval join": (
        [EVENTS, SHIPMENTS],
        "SELECT e.k, s.sid FROM events AS e JOIN shipments AS s ON e.v = s.oid "
        "AND s.ts BETWEEN e.ts AND e.ts + INTERVAL '2' SECOND",
        (OperatorKind.SQL_INTERVAL_JOIN,),
        [
            (1, ("a", 1, 1 * S, INSERT)),
            (2, (10, 1, 2 * S, INSERT)),
            (1, ("b", 2, 4 * S, INSERT)),
            3 * S,
            (2, (11, 1, 3 * S, INSERT)),
            (2, (12, 2, 5 * S, INSERT)),
            (2, (13, 1, 0, INSERT)),
            MAX_WATERMARK,
        ],
        {"map:IntervalJoinLeftCache", "map:IntervalJoinRightCache", "@timers"},
    ),
    "top-n over updates": (
        [ITEMS],
        "SELECT k, item, s, rn FROM (SELECT k, item, s, ROW_NUMBER() OVER (PARTITION BY k ORDER BY s DESC) AS rn "
        "FROM (SELECT k, item, SUM(v) AS s FROM items GROUP BY k, item)) WHERE rn <= 2",
        (OperatorKind.SQL_RANK,),
        [
            (0, ("a", "x", 5, INSERT)),
            (0, ("a", "y", 7, INSERT)),
            (0, ("a", "z", 6, INSERT)),
            (0, ("a", "x", 5, UPDATE_BEFORE)),
            (0, ("a", "x", 9, UPDATE_AFTER)),
            (0, ("a", "y", 7, UPDATE_BEFORE)),
            (0, ("a", "y", 8, UPDATE_AFTER)),
        ],
        {"map:data-state", "value:sorted-map"},
    ),
    "first row by event time": (
        [EVENTS],
        "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS rn FROM events) "
        "WHERE rn = 1",
        (OperatorKind.SQL_DEDUPLICATE,),
        [
            (0, ("a", 1, 3 * S, 3 * S, INSERT)),
            (0, ("a", 2, 2 * S, 2 * S, INSERT)),
            (0, ("b", 3, 4 * S, 4 * S, INSERT)),
            2 * S,
            (0, ("b", 4, 3 * S, 3 * S, INSERT)),
            MAX_WATERMARK,
            (0, ("a", 5, 1 * S, 1 * S, INSERT)),
        ],
        {"value:waiting-to-emit-on-timer", "@timers"},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_restored_operator_emits_what_the_running_one_does(case: str) -> None:
    setup, query, kinds, inputs, _ = CASES[case]
    factories = _operators(setup, query, kinds)
    straight = _Pipeline(factories)
    for item in inputs:
        straight.feed(item)
    assert straight.out, "the operator emitted nothing: the case checks nothing"
    for split in range(1, len(inputs)):
        assert _run_restored(factories, inputs, split) == straight.out, f"restored after {split} inputs"


@pytest.mark.parametrize("case", list(CASES))
def test_state_is_kept_under_flinks_state_names(case: str) -> None:
    setup, query, kinds, inputs, names = CASES[case]
    assert names <= _state_names(_operators(setup, query, kinds), inputs)
