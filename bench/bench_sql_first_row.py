"""Benchmark: the first row of a small bounded SQL query on a warm session (issue 23: < 1.5 s).

Run: ``.venv/bin/python bench/bench_sql_first_row.py [--rounds 5] [--master URL]``. On one
SparkSession (``local[2]``, or ``--master``'s), warm (a bounded job ran, and the warm-up it
started ended), rounds that each time, interleaved:

- ``t_env.execute_sql("SELECT k, COUNT(*), SUM(v) FROM t GROUP BY k").collect()`` over a
  1,000-row CSV file: seconds until it returned (the job submitted) and until the first row;
- the same for ``SELECT k, v FROM t WHERE v > 990`` (no exchange: one Spark stage);
- Spark's own floor: a PySpark RDD job of the same shape (two stages, a shuffle; and one
  stage), which the first rows are compared with, a ratio that a busy machine moves little.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from warm_session import warm_session

from flowmagic.table import EnvironmentSettings, TableEnvironment

QUERIES = {
    "GROUP BY": "SELECT k, COUNT(*) AS c, SUM(v) AS s FROM t GROUP BY k",
    "filter": "SELECT k, v FROM t WHERE v > 990",
}


def first_row(path: str, query: str) -> tuple[float, float]:
    """Seconds until ``execute_sql`` returned, and until the first row of its result."""
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    config = t_env.get_config()
    config.set("parallelism.default", "2")
    config.set("flowmagic.executor", "spark")
    t_env.execute_sql(
        f"CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')"
    )
    started = time.perf_counter()
    result = t_env.execute_sql(query)
    submitted = time.perf_counter() - started
    rows = iter(result.collect())
    next(rows)
    first = time.perf_counter() - started
    for _row in rows:
        pass
    return submitted, first


def spark_floor(spark, shuffle: bool) -> float:
    """Seconds of a PySpark RDD job over 1,000 numbers in 2 partitions (with a shuffle: 2 stages)."""
    started = time.perf_counter()
    rdd = spark.sparkContext.parallelize(range(1000), 2).map(lambda i: (i % 10, i))
    if shuffle:
        rdd = rdd.reduceByKey(lambda a, b: a + b, 2)
    rdd.collect()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--master", default="local[2,4]", help="Spark's master URL (spark://host:port: a cluster)")
    args = parser.parse_args()
    spark, _warming = warm_session(args.master)
    path = os.path.join(tempfile.mkdtemp(prefix="bench-first-row-"), "kv.csv")
    with open(path, "w") as file:
        file.write("".join(f"{i % 10},{i}\n" for i in range(1000)))
    # The planner's modules load with the first query of a process (a warm session's first
    # SQL query may pay it): that one is reported apart.
    _submitted, first_query = first_row(path, QUERIES["GROUP BY"])
    results: dict[str, list[float]] = {}
    loads = []
    for _round in range(args.rounds):
        loads.append(os.getloadavg()[0])
        for name, query in QUERIES.items():
            submitted, first = first_row(path, query)
            results.setdefault(f"{name}: execute_sql() returned (s)", []).append(submitted)
            results.setdefault(f"{name}: first row (s)", []).append(first)
        results.setdefault("Spark floor, 2 stages (s)", []).append(spark_floor(spark, True))
        results.setdefault("Spark floor, 1 stage (s)", []).append(spark_floor(spark, False))
    medians = {name: statistics.median(values) for name, values in results.items()}
    print(f"load average (1 min): min {min(loads):.1f}, median {statistics.median(loads):.1f}, max {max(loads):.1f}")
    print(f"{'the process first SQL query: first row (s)':50s} {first_query:8.3f}")
    for name, value in medians.items():
        print(f"{name:50s} {value:8.3f}")
    for name, floor in (("GROUP BY", "Spark floor, 2 stages (s)"), ("filter", "Spark floor, 1 stage (s)")):
        print(f"ratio {name} first row / {floor}: {medians[f'{name}: first row (s)'] / medians[floor]:.2f}")
    spark.stop()


if __name__ == "__main__":
    main()
