"""What the SQL operators' per-row speed rests on, kept honest.

The seed's unbounded query (``SELECT num, count(*) FROM source_table GROUP BY num`` over a
``datagen`` table) costs its operators no Python function call per row: the datagen scan
makes a batch's rows at once, the exchange's key selector is the one call per row, and the
GroupAggregate updates and emits in one loop. Counting calls (not timing them) keeps this
true on a busy machine. The shortcuts keep their results: datagen's rows are the same with
numpy and without, and the sink's NOT NULL check passing batches whole still finds a null.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from flowmagic.errors import JobFailedError
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.transformations import PartitionTransformation, Transformation
from flowmagic.runtime.connectors import sources
from flowmagic.runtime.connectors.factories import Column, TableContext, TableOptions
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import implementation
from flowmagic.runtime.sql.operator import INSERT, UPDATE_AFTER, UPDATE_BEFORE
from flowmagic.table import EnvironmentSettings, TableEnvironment

TASK = TaskInfo("test", 0, 1, 128, 0, batch=False)
SOURCE = (
    "CREATE TABLE source_table (num INT) WITH ('connector'='datagen','fields.num.min'='0',"
    "'fields.num.max'='10','rows-per-second'='10000000')"
)
ROWS = 20_000


def _chain() -> tuple[Any, Any, Any]:
    """The scan, the exchange's key selector and the GroupAggregate of the seed's query."""
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(SOURCE)
    plan = t_env.session.translate("SELECT num, count(*) AS cnt FROM source_table GROUP BY num")
    found: dict[OperatorKind, Transformation] = {}

    def visit(t: Transformation) -> None:
        for child in t.inputs:
            visit(child)
        operator = getattr(t, "operator", None)
        if operator is not None:
            found[operator.kind] = t

    visit(plan.translation.sink)
    scan_params = found[OperatorKind.SQL_TABLE_SOURCE_SCAN].operator.params  # type: ignore[attr-defined]
    scan = implementation(OperatorKind.SQL_TABLE_SOURCE_SCAN)(scan_params, TASK)
    aggregate_t = found[OperatorKind.SQL_GROUP_AGGREGATE]
    aggregate = implementation(OperatorKind.SQL_GROUP_AGGREGATE)(
        aggregate_t.name,
        aggregate_t.operator.params,  # type: ignore[attr-defined]
        TASK,
    )
    (exchange,) = aggregate_t.inputs
    assert isinstance(exchange, PartitionTransformation)
    return scan, exchange.partitioner.key_selector, aggregate


def test_the_seed_query_costs_its_operators_no_python_call_per_row() -> None:
    scan, key_of, aggregate = _chain()
    out: list[Any] = []
    aggregate.output.batch_targets.append(out.extend)
    aggregate.output.seal()
    aggregate.open()
    aggregate.track_changes()
    calls = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(count)
    try:
        for batch in scan.epoch_batches([(0, ROWS)]):
            for row in batch:
                key_of(row)
            aggregate.process_batch(batch)
    finally:
        sys.setprofile(None)
    # One call per row is the key selector's; the rest is per batch (or per new key).
    assert calls < ROWS * 1.1, f"{calls / ROWS:.2f} Python calls per row"
    # And each row still made its own changelog: +I of a key's first row, -U/+U of each next one.
    counts: dict[int, int] = {}
    expected = []
    for batch in scan.epoch_batches([(0, ROWS)]):
        for num, _kind in batch:
            before = counts.get(num)
            counts[num] = (before or 0) + 1
            if before is None:
                expected.append((num, 1, INSERT))
            else:
                expected += [(num, before, UPDATE_BEFORE), (num, before + 1, UPDATE_AFTER)]
    assert out == expected
    assert aggregate.take_changed_keys() == {key_of((num, INSERT)) for num in counts}


@pytest.mark.parametrize("enforcer", ["ERROR", "DROP"])
def test_the_sinks_not_null_check_still_finds_a_null_in_a_batch(
    enforcer: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Batches without a null pass the check whole; one null among them is still found.
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = t_env.get_config()
    config.set("parallelism.default", "1")
    config.set("flowmagic.executor", "local")
    config.set("table.exec.sink.not-null-enforcer", enforcer)
    t_env.execute_sql("CREATE TABLE out_t (x INT NOT NULL, y STRING) WITH ('connector' = 'print')")
    insert = "INSERT INTO out_t SELECT x, y FROM (VALUES (1, 'a'), (CAST(NULL AS INT), 'b'), (3, 'c')) AS t(x, y)"
    if enforcer == "ERROR":
        with pytest.raises(JobFailedError, match="Column 'x' is NOT NULL, however, a null value is being written"):
            t_env.execute_sql(insert).wait()
    else:
        t_env.execute_sql(insert).wait()
        assert capsys.readouterr().out.splitlines() == ["+I[1, a]", "+I[3, c]"]


def test_datagen_makes_the_same_rows_with_numpy_and_without(monkeypatch: pytest.MonkeyPatch) -> None:
    # An executor without numpy (PySpark does not need it) must replay an epoch's rows alike.
    columns = ("a INT", "b BIGINT", "c DOUBLE", "d BOOLEAN", "e STRING", "f TINYINT", "g DECIMAL(10, 2)")
    given = {"fields.a.min": "-5", "fields.a.max": "10", "fields.e.length": "40"}
    table = TableContext("t", tuple(Column(*c.split(" ", 1)) for c in columns), given)
    generator = sources.DatagenFields.of(table, TableOptions("datagen", table))
    ranges = [(0, 1), (0, 1500), (7, 300), (10**12, 10**12 + 700), (2**64 - 600, 2**64 - 1)]
    made = [generator.tuples(start, end, 3) for start, end in ranges]
    monkeypatch.setattr(sources, "_numpy", None)
    assert [generator.tuples(start, end, 3) for start, end in ranges] == made
    assert {row[0] for row in made[1]} == set(range(-5, 11))
