"""Benchmark: CPU time per row of the seed's unbounded SQL query's operators, outside Spark.

Run: ``.venv/bin/python bench/bench_sql_chain.py [--rows 400000] [--rounds 3]``. The operators
of ``SELECT num, count(*) AS cnt FROM source_table GROUP BY num`` over a ``datagen`` table
(``num`` 0..10), made from the planner's specs as a continuous job's subtasks make them, run in
this process on one epoch's offsets: the datagen scan makes the rows, the hash exchange's key
selector routes them to 2 channels (as its record writer does, routes cached), the buffers are
pickled and unpickled as they cross it, and the GroupAggregate emits every ``-U``/``+U``. It
prints the CPU time (``time.process_time``, robust to a busy machine) per row of each part,
the median of ``--rounds``.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.transformations import PartitionTransformation, Transformation
from flowmagic.key_groups import assign_key_to_parallel_operator
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import implementation
from flowmagic.runtime.wire import pickle_records
from flowmagic.table import EnvironmentSettings, TableEnvironment

SOURCE = (
    "CREATE TABLE source_table (num INT) WITH ('connector'='datagen','fields.num.min'='0',"
    "'fields.num.max'='10','rows-per-second'='10000000')"
)
QUERY = "SELECT num, count(*) AS cnt FROM source_table GROUP BY num"
TASK = TaskInfo("bench", 0, 1, 128, 0, batch=False)
CHANNELS = 2


def operators() -> tuple[Any, Any, Any]:
    """The scan, the exchange's key selector and the GroupAggregate (its output counted)."""
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(SOURCE)
    plan = t_env.session.translate(QUERY)
    found: dict[OperatorKind, Transformation] = {}

    def visit(t: Transformation) -> None:
        for child in t.inputs:
            visit(child)
        operator = getattr(t, "operator", None)
        if operator is not None:
            found[operator.kind] = t

    visit(plan.translation.sink)
    scan = implementation(OperatorKind.SQL_TABLE_SOURCE_SCAN)(
        found[OperatorKind.SQL_TABLE_SOURCE_SCAN].operator.params,  # type: ignore[attr-defined]
        TASK,
    )
    node = found[OperatorKind.SQL_GROUP_AGGREGATE]
    aggregate = implementation(OperatorKind.SQL_GROUP_AGGREGATE)(node.name, node.operator.params, TASK)  # type: ignore[attr-defined]
    (exchange,) = node.inputs
    assert isinstance(exchange, PartitionTransformation)
    aggregate.output.batch_targets.append(lambda rows: None)
    aggregate.output.seal()
    aggregate.open()
    aggregate.track_changes()
    return scan, exchange.partitioner.key_selector, aggregate


def run(scan: Any, key_of: Any, aggregate: Any, start: int, rows: int) -> dict[str, float]:
    """CPU seconds of each part over rows ``start`` to ``start + rows``."""
    times = dict.fromkeys(("datagen scan", "exchange routing", "exchange pickling", "GroupAggregate"), 0.0)
    routes: dict[Any, int] = {}
    batches = scan.epoch_batches([(start, start + rows)])
    while True:
        began = time.process_time()
        batch = next(batches, None)
        made = time.process_time()
        times["datagen scan"] += made - began
        if batch is None:
            return times
        buffers: list[list[Any]] = [[] for _ in range(CHANNELS)]
        for row in batch:
            key = key_of(row)
            channel = routes.get(key)
            if channel is None:
                channel = routes[key] = assign_key_to_parallel_operator(key, 128, CHANNELS)
            buffers[channel].append(row)
        routed = time.process_time()
        received = [pickle.loads(pickle_records(buffer)) for buffer in buffers]
        crossed = time.process_time()
        for buffer in received:
            aggregate.process_batch(buffer)
        times["exchange routing"] += routed - made
        times["exchange pickling"] += crossed - routed
        times["GroupAggregate"] += time.process_time() - crossed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    scan, key_of, aggregate = operators()
    run(scan, key_of, aggregate, 0, args.rows)  # warm: every key seen
    rounds = [run(scan, key_of, aggregate, args.rows * (i + 1), args.rows) for i in range(args.rounds)]
    total = 0.0
    for part in rounds[0]:
        per_row = statistics.median(r[part] for r in rounds) / args.rows * 1e6
        total += per_row
        print(f"{part:20s} {per_row:6.2f} us/row")
    print(f"{'all':20s} {total:6.2f} us/row")


if __name__ == "__main__":
    main()
