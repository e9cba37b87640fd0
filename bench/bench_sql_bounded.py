"""Benchmark: a bounded SQL aggregate on Spark, flowmagic against PySpark and the DataStream API.

Run: ``.venv/bin/python bench/bench_sql_bounded.py [--rows 5000000] [--keys 1000] [--rounds 3]``.
Generates (once, cached under bench/data/) a CSV of ``k,v`` rows (``k`` one of ``--keys``
integers, ``v`` an integer), then times on ONE SparkSession, after a warm-up of each, rounds
that run every case once (so that a slow spell of a shared machine hits all alike):

- flowmagic SQL (batch mode):  ``SELECT k, COUNT(*), SUM(v) FROM t GROUP BY k``, collected
- PySpark DataFrame:           ``spark.read.csv(...).groupBy("k").agg(count("*"), sum("v"))``
- flowmagic DataStream (BATCH): read_text_file -> map to (k, 1, v) -> key_by -> reduce

and prints the medians and the ratios the issue asks for (SQL / PySpark at most 3, SQL /
DataStream at most 1.2). Each flowmagic run checks its rows against PySpark's.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import flowmagic
from flowmagic.table import EnvironmentSettings, TableEnvironment

DATA = Path(__file__).resolve().parent / "data"


def table_file(rows: int, keys: int) -> Path:
    """``rows`` lines ``k,v`` (seeded), cached."""
    path = DATA / f"sql-kv-{rows}-{keys}.csv"
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    rng = random.Random(42)
    with open(path, "w") as out:
        for start in range(0, rows, 100_000):
            count = min(100_000, rows - start)
            ks = rng.choices(range(keys), k=count)
            vs = rng.choices(range(1000), k=count)
            out.write("".join(f"{k},{v}\n" for k, v in zip(ks, vs, strict=True)))
    return path


def sql_job(path: Path, parallelism: int) -> tuple[float, dict[int, tuple[int, int]]]:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    config = t_env.get_config()
    config.set("parallelism.default", str(parallelism))
    config.set("flowmagic.executor", "spark")
    t_env.execute_sql(
        f"CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')"
    )
    started = time.perf_counter()
    rows = list(t_env.execute_sql("SELECT k, COUNT(*) AS c, SUM(v) AS s FROM t GROUP BY k").collect())
    elapsed = time.perf_counter() - started
    return elapsed, {row[0]: (row[1], row[2]) for row in rows}


def dataframe_job(path: Path, spark) -> tuple[float, dict[int, tuple[int, int]]]:
    from pyspark.sql import functions as F

    started = time.perf_counter()
    frame = spark.read.csv(str(path), schema="k INT, v INT")
    rows = frame.groupBy("k").agg(F.count("*").alias("c"), F.sum("v").alias("s")).collect()
    elapsed = time.perf_counter() - started
    return elapsed, {row["k"]: (row["c"], row["s"]) for row in rows}


def _parse(line: str) -> tuple[int, int, int]:
    k, v = line.split(",")
    return int(k), 1, int(v)


def _add(a: tuple[int, int, int], b: tuple[int, int, int]) -> tuple[int, int, int]:
    return a[0], a[1] + b[1], a[2] + b[2]


def datastream_job(path: Path, parallelism: int, spark) -> tuple[float, dict[int, tuple[int, int]]]:
    env = flowmagic.StreamExecutionEnvironment(parallelism=parallelism)
    env.set_runtime_mode("BATCH")
    results = env.read_text_file(str(path)).map(_parse).key_by(lambda row: row[0]).reduce(_add)
    started = time.perf_counter()
    rows = list(results.execute_and_collect())
    elapsed = time.perf_counter() - started
    return elapsed, {k: (c, s) for k, c, s in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="runs of every case, interleaved; medians are compared")
    args = parser.parse_args()
    path = table_file(args.rows, args.keys)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(f"local[{args.parallelism}]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "4g")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    cases = {
        "flowmagic SQL": lambda p: sql_job(p, args.parallelism),
        "PySpark DataFrame": lambda p: dataframe_job(p, spark),
        "flowmagic DataStream": lambda p: datastream_job(p, args.parallelism, spark),
    }
    warm = table_file(10_000, 100)
    for job in cases.values():
        job(warm)
    print(
        f"SELECT k, COUNT(*), SUM(v) FROM t GROUP BY k over {args.rows:,} CSV rows "
        f"({path.stat().st_size / 2**20:.0f} MB), {args.keys} keys, parallelism {args.parallelism}, "
        f"{os.cpu_count()} cores, {args.rounds} round(s)"
    )
    runs: dict[str, list[float]] = {}
    reference: dict[int, tuple[int, int]] | None = None
    for round_number in range(1, args.rounds + 1):
        for name, job in cases.items():
            seconds, rows = job(path)
            if reference is None:
                reference = rows
            elif rows != reference:
                raise SystemExit(f"{name} disagrees with the first case's rows")
            runs.setdefault(name, []).append(seconds)
            print(f"  round {round_number}: {name:<24}{seconds:>8.2f} s", flush=True)
    medians = {name: statistics.median(values) for name, values in runs.items()}
    print("Medians:")
    for name, seconds in medians.items():
        print(f"  {name:<24}{seconds:>8.2f} s")
    sql = medians["flowmagic SQL"]
    print(f"  flowmagic SQL / PySpark DataFrame      {sql / medians['PySpark DataFrame']:>6.2f}  (target <= 3)")
    print(f"  flowmagic SQL / flowmagic DataStream   {sql / medians['flowmagic DataStream']:>6.2f}  (target <= 1.2)")
    spark.stop()


if __name__ == "__main__":
    main()
