"""Benchmark: planning Flink SQL with ``explain_sql`` (parse, validate, optimize, ExecNode graph,
EXPLAIN text).

Run: ``.venv/bin/python bench/bench_sql_planning.py [--rounds 30]``. Reports the median of
``--rounds`` rounds, each in a fresh ``TableEnvironment`` with the statements' DDL already run:

- the seed query (``SELECT num, count(*) AS cnt FROM source_table GROUP BY num`` over datagen);
- a 20-table query: 20 datagen tables with computed columns, each filtered, 10 pairs joined on
  their keys, grouped and counted per pair, the 10 aggregates UNION ALL'ed (about 40 ExecNodes
  before exchanges, 70 with them).

Then the same queries planned *and* built into every graph Flink would submit: a ``%%flow NAME
--sql`` pipeline (EXPLAIN text, ExecNodes, transformations with the collect sink, StreamGraph
with its operator hashes, JobGraph, ExecutionGraph, physical graph). Target for the 20-table
query: under 200 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flowmagic.sql.exec_nodes import nodes
from flowmagic.sql_pipeline import SqlPipeline
from flowmagic.table import EnvironmentSettings, TableEnvironment

SEED_DDL = [
    "CREATE TABLE source_table (num INT) WITH "
    "('connector'='datagen','fields.num.min'='0','fields.num.max'='10','rows-per-second'='1')"
]
SEED_QUERY = "SELECT num, count(*) AS cnt FROM source_table GROUP BY num"


def wide() -> tuple[list[str], str]:
    ddl = [
        f"CREATE TABLE t{i} (id INT, v INT, k AS MOD(id, 7), w AS v * 2) WITH "
        f"('connector'='datagen','number-of-rows'='100')"
        for i in range(20)
    ]
    branches = [
        f"SELECT a.k, COUNT(*) AS c, SUM(b.w) AS s FROM t{2 * p} AS a JOIN t{2 * p + 1} AS b ON a.k = b.k "
        f"WHERE a.v > {p} AND b.id < 1000 GROUP BY a.k"
        for p in range(10)
    ]
    return ddl, "\nUNION ALL\n".join(branches)


def median_ms(ddl: list[str], query: str, rounds: int) -> tuple[float, int]:
    times = []
    count = 0
    for _ in range(rounds):
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        for statement in ddl:
            t_env.execute_sql(statement)
        start = time.perf_counter()
        t_env.explain_sql(query)
        times.append(time.perf_counter() - start)
        count = len(nodes(t_env.session.compile(query)))
    return statistics.median(times) * 1000, count


def median_graphs_ms(ddl: list[str], query: str, rounds: int) -> tuple[float, int, int]:
    """Median time to plan ``query`` and build all its graphs, as a SQL cell does (its DDL
    included: a cell runs it each time); the StreamGraph nodes and JobGraph vertices."""
    script = "\n".join(f"{statement};" for statement in [*ddl, query])
    times = []
    pipeline = None
    for _ in range(rounds):
        start = time.perf_counter()
        pipeline = SqlPipeline("bench", script, parallelism=2)
        times.append(time.perf_counter() - start)
    assert pipeline is not None
    return statistics.median(times) * 1000, len(pipeline.stream_graph.nodes), len(pipeline.job_graph.vertices)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    seed_ms, seed_nodes = median_ms(SEED_DDL, SEED_QUERY, rounds)
    print(f"seed query: explain_sql, median {seed_ms:.1f} ms ({seed_nodes} ExecNodes)")
    ddl, query = wide()
    wide_ms, wide_nodes = median_ms(ddl, query, rounds)
    print(f"20-table query: explain_sql, median {wide_ms:.1f} ms ({wide_nodes} ExecNodes)")
    for label, (statements, text) in (("seed query", (SEED_DDL, SEED_QUERY)), ("20-table query", (ddl, query))):
        ms, operators, vertices = median_graphs_ms(statements, text, rounds)
        print(
            f"{label}: DDL, plans and all graphs (%%flow --sql), median {ms:.1f} ms "
            f"({operators} StreamGraph nodes, {vertices} JobGraph vertices)"
        )


if __name__ == "__main__":
    main()
