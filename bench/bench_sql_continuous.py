"""Benchmark: the seed's unbounded SQL query in the continuous mode, against a
``transformWithStateInPandas`` processor doing the same retracting count, on one SparkSession.

Run: ``.venv/bin/python bench/bench_sql_continuous.py [--seconds 60] [--rounds 2]``. In
interleaved rounds (compared by their medians), each case runs ``--seconds`` after its first
epochs:

- flowmagic SQL: the seed's ``SELECT num, count(*) AS cnt FROM source_table GROUP BY num``
  over a ``datagen`` table (``num`` 0..10) whose ``rows-per-second`` is far above what the job
  can take, so epochs admit as much as they can: rows/s into the GroupAggregate, with every
  ``-U``/``+U`` going to a ``blackhole`` sink (``INSERT INTO``) and, separately, to the query's
  collect sink (every update travels to this process, as ``collect()`` streams them);
- the same count as a Python stateful processor (``transformWithStateInPandas``, RocksDB
  state) over Spark's rate source, emitting the retraction of the previous count and the new
  count for every row, as Flink's GroupAggregate does: rows/s processed.

Each flowmagic case reports its epoch periods (median and max) to show that the rate holds
with a bounded epoch time, and the load average over the run is printed with the figures.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from warm_session import spark_session

from flowmagic.table import StreamTableEnvironment

KEYS = 11
SOURCE = (
    "CREATE TABLE source_table (num INT) WITH ('connector'='datagen','fields.num.min'='0',"
    "'fields.num.max'='10','rows-per-second'='10000000')"
)
QUERY = "SELECT num, count(*) AS cnt FROM source_table GROUP BY num"


def flowmagic_sql(seconds: float, collect: bool) -> tuple[float, float, float]:
    """Rows/s into the GroupAggregate, and the median and max epoch period (s)."""
    t_env = StreamTableEnvironment.create()
    t_env.execute_sql(SOURCE)
    if collect:
        result = t_env.execute_sql(QUERY)
        rows = result.collect()
    else:
        t_env.execute_sql("CREATE TABLE sink (num INT, cnt BIGINT) WITH ('connector'='blackhole')")
        result = t_env.execute_sql(f"INSERT INTO sink {QUERY}")
        rows = None
    job = result.get_job_client()
    taken = [0]
    if rows is not None:
        import threading

        def drain() -> None:
            for _row in rows:
                taken[0] += 1

        threading.Thread(target=drain, daemon=True).start()
    try:
        while job.epochs < 3:
            if job.get_job_status().is_globally_terminal:
                job.wait()
                raise SystemExit(f"the job ended: {job}")
            time.sleep(0.05)
        vertex = next(v for v in job.graph.vertices.values() if v.name.startswith("GroupAggregate"))

        def records() -> int:
            return sum(s.records_in for s in job.monitor.vertices[vertex.id])

        ends: list[float] = []
        start_records, started, seen = records(), time.time(), job.epochs
        while time.time() - started < seconds:
            if job.epochs != seen:
                seen = job.epochs
                ends.append(time.time())
            time.sleep(0.01)
        rate = (records() - start_records) / (time.time() - started)
        periods = [b - a for a, b in itertools.pairwise(ends)] or [float("nan")]
        return rate, statistics.median(periods), max(periods)
    finally:
        job.cancel()


def pyspark_transform_with_state(spark, seconds: float) -> float:
    """The retracting count as a Python stateful processor (``transformWithStateInPandas``,
    RocksDB state): for every row the previous count retracted (``-U``) and the new one
    (``+U``, or ``+I`` for a key's first row), vectorized per key and batch: rows/s processed."""
    import numpy
    import pandas
    from pyspark.sql import functions
    from pyspark.sql.streaming import StatefulProcessor

    class RetractingCount(StatefulProcessor):
        def init(self, handle) -> None:
            self.count = handle.getValueState("count", "count LONG")

        def handleInputRows(self, key, rows, timerValues):
            count = (self.count.get() or (0,))[0]
            for frame in rows:
                after = numpy.arange(count + 1, count + len(frame) + 1)
                before = after[after > 1] - 1
                kinds = ["-U"] * len(before) + ["+U" if count else "+I"] + ["+U"] * (len(frame) - 1)
                values = numpy.concatenate([before, after])
                yield pandas.DataFrame({"num": key[0], "op": kinds, "cnt": values})
                count += len(frame)
            self.count.update((count,))

        def close(self) -> None:
            pass

    spark.conf.set(
        "spark.sql.streaming.stateStore.providerClass",
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    )
    rate = spark.readStream.format("rate").option("rowsPerSecond", 50_000).option("numPartitions", 2).load()
    counts = (
        rate.select((functions.col("value") % KEYS).alias("num"))
        .groupBy("num")
        .transformWithStateInPandas(RetractingCount(), "num LONG, op STRING, cnt LONG", "Update", "None")
    )
    checkpoint = tempfile.mkdtemp(prefix="bench-tws-")
    query = counts.writeStream.outputMode("update").format("noop").option("checkpointLocation", checkpoint).start()
    try:
        # Its first batches (the Python workers' start) are left out, as flowmagic's first epochs.
        deadline = time.time() + 300
        while len([p for p in query.recentProgress if p.get("numInputRows")]) < 2 and time.time() < deadline:
            time.sleep(0.2)
        first = len(query.recentProgress)
        time.sleep(seconds)
        progress = [p for p in query.recentProgress[first:] if p.get("numInputRows")]
        rows = sum(p["numInputRows"] for p in progress)
        busy = sum(p["durationMs"]["triggerExecution"] for p in progress) / 1000
        return rows / busy if busy else 0.0
    finally:
        query.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    spark = spark_session("local[2,4]", **{"spark.sql.shuffle.partitions": "2"})
    seconds = args.seconds
    cases: dict[str, Callable[[], float | tuple[float, float, float]]] = {
        "flowmagic SQL GROUP BY, updates to blackhole": lambda: flowmagic_sql(seconds, False),
        "flowmagic SQL GROUP BY, updates collected": lambda: flowmagic_sql(seconds, True),
        "transformWithStateInPandas retracting count": lambda: pyspark_transform_with_state(spark, seconds),
    }
    results: dict[str, list[float]] = {}
    loads = []
    for _round in range(args.rounds):
        for name, case in cases.items():
            value = case()
            loads.append(os.getloadavg()[0])
            if isinstance(value, tuple):
                rate, median_epoch, max_epoch = value
                results.setdefault(f"{name} (rows/s)", []).append(rate)
                results.setdefault(f"{name}, median epoch (s)", []).append(median_epoch)
                results.setdefault(f"{name}, max epoch (s)", []).append(max_epoch)
            else:
                results.setdefault(f"{name} (rows/s)", []).append(value)
    medians = {name: statistics.median(values) for name, values in results.items()}
    for name, value in medians.items():
        print(f"{name:62s} {value:>14,.3f}")
    tws = medians["transformWithStateInPandas retracting count (rows/s)"]
    for name in ("flowmagic SQL GROUP BY, updates to blackhole", "flowmagic SQL GROUP BY, updates collected"):
        print(f"{name} / transformWithStateInPandas: {medians[f'{name} (rows/s)'] / tws:.2f}x")
    print(f"load average (1 min) after each case: {', '.join(f'{load:.1f}' for load in loads)}")
    spark.stop()


if __name__ == "__main__":
    main()
