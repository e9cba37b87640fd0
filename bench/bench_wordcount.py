"""Benchmark: WordCount on Spark, flowmagic against what a PySpark user writes by hand.

Run: ``.venv/bin/python bench/bench_wordcount.py [--size-mb 500] [--parallelism 2] [--rounds 3]``.
Generates (once, cached under bench/data/) a Zipf-distributed corpus, then times on ONE
SparkSession, side by side, after a warm-up job:

- flowmagic BATCH:     read_text_file -> flat_map -> key_by -> sum(1)
- flowmagic STREAMING: the same program, one update per word (a no-op sink takes them)
- PySpark DataFrame:   spark.read.text -> split/explode -> groupBy().count()
- PySpark RDD:         textFile.flatMap.map.reduceByKey
- PySpark mapPartitions + Counter: textFile.mapPartitions(Counter per partition).reduceByKey
- Python Counter, in one process and in two processes (no Spark)

and prints the ratios the runtime issue asks for; then the cost of the live metrics channel
(BATCH runs with and without it, interleaved).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import multiprocessing
import operator
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import flowmagic
from flowmagic.runtime import execute

DATA = Path(__file__).resolve().parent / "data"


def corpus(size_mb: int) -> Path:
    """A text file of ``size_mb`` MB: lines of 10 words drawn from a Zipf(s=1.1) vocabulary."""
    path = DATA / f"zipf-{size_mb}mb.txt"
    if path.exists() and path.stat().st_size >= size_mb << 20:
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    rng = random.Random(42)
    vocabulary = [f"w{i}" for i in range(200_000)]
    weights = list(itertools.accumulate(1 / rank**1.1 for rank in range(1, len(vocabulary) + 1)))
    target = size_mb << 20
    with open(path, "w") as out:
        written = 0
        while written < target:
            words = rng.choices(vocabulary, cum_weights=weights, k=500_000)
            block = "\n".join(" ".join(words[i : i + 10]) for i in range(0, len(words), 10)) + "\n"
            out.write(block)
            written += len(block)
    return path


def flowmagic_job(path: Path, parallelism: int, mode: str, spark, metrics: bool = True) -> float:
    env = flowmagic.StreamExecutionEnvironment(parallelism=parallelism)
    env.set_runtime_mode(mode)
    (
        env.read_text_file(str(path))
        .flat_map(lambda line: [(word, 1) for word in line.split()])
        .key_by(lambda pair: pair[0])
        .sum(1)
        .add_sink(lambda record: None)
    )
    started = time.perf_counter()
    execute(env.get_execution_graph(), spark=spark, echo=False, metrics=metrics)
    return time.perf_counter() - started


def dataframe_job(path: Path, spark) -> float:
    from pyspark.sql import functions as F

    started = time.perf_counter()
    words = spark.read.text(str(path)).select(F.explode(F.split("value", " ")).alias("word"))
    words.groupBy("word").count().collect()
    return time.perf_counter() - started


def rdd_job(path: Path, spark, parallelism: int) -> float:
    started = time.perf_counter()
    lines = spark.sparkContext.textFile(str(path), parallelism)
    lines.flatMap(str.split).map(lambda word: (word, 1)).reduceByKey(lambda a, b: a + b).collect()
    return time.perf_counter() - started


def _count_words(lines: Iterator[str]) -> Iterator[tuple[str, int]]:
    return iter(collections.Counter(word for line in lines for word in line.split()).items())


def rdd_counter_job(path: Path, spark, parallelism: int) -> float:
    started = time.perf_counter()
    lines = spark.sparkContext.textFile(str(path), parallelism)
    lines.mapPartitions(_count_words).reduceByKey(operator.add).collect()
    return time.perf_counter() - started


def _count_part(args: tuple[str, int, int]) -> collections.Counter:
    path, start, end = args
    counter: collections.Counter = collections.Counter()
    with open(path, "rb") as file:
        file.seek(start)
        if start:
            file.readline()
        while file.tell() < end:
            line = file.readline()
            if not line:
                break
            counter.update(line.split())
    return counter


def counter_job(path: Path, processes: int) -> float:
    started = time.perf_counter()
    size = path.stat().st_size
    parts = [(str(path), size * i // processes, size * (i + 1) // processes) for i in range(processes)]
    if processes == 1:
        _count_part(parts[0])
    else:
        with multiprocessing.Pool(processes) as pool:
            total: collections.Counter = collections.Counter()
            for counter in pool.map(_count_part, parts):
                total.update(counter)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=500)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument(
        "--skip", nargs="*", default=[], help="cases to skip: batch metrics streaming dataframe rdd counter"
    )
    parser.add_argument("--metrics-size-mb", type=int, default=50, help="corpus size of the metrics on/off runs")
    parser.add_argument("--pairs", type=int, default=5, help="interleaved metrics on/off pairs")
    parser.add_argument("--rounds", type=int, default=1, help="runs of every case, interleaved; medians are compared")
    args = parser.parse_args()
    path = corpus(args.size_mb)
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
    warm = corpus(1)
    flowmagic_job(warm, args.parallelism, "BATCH", spark)
    dataframe_job(warm, spark)
    rdd_job(warm, spark, args.parallelism)
    rdd_counter_job(warm, spark, args.parallelism)

    runs: dict[str, list[float]] = {}
    cases = {
        "flowmagic BATCH": ("batch", lambda: flowmagic_job(path, args.parallelism, "BATCH", spark)),
        "flowmagic STREAMING": ("streaming", lambda: flowmagic_job(path, args.parallelism, "STREAMING", spark)),
        "PySpark DataFrame": ("dataframe", lambda: dataframe_job(path, spark)),
        "PySpark RDD": ("rdd", lambda: rdd_job(path, spark, args.parallelism)),
        "PySpark mapPartitions+Counter": ("rdd", lambda: rdd_counter_job(path, spark, args.parallelism)),
        "Python Counter, 1 process": ("counter", lambda: counter_job(path, 1)),
        "Python Counter, 2 processes": ("counter", lambda: counter_job(path, 2)),
    }
    print(
        f"WordCount over {path.stat().st_size / 2**20:.0f} MB, parallelism {args.parallelism}, {os.cpu_count()} cores,"
        f" {args.rounds} round(s)"
    )
    # Rounds run every case once each, so that a slow spell of a shared machine hits all alike.
    for round_number in range(1, args.rounds + 1):
        for name, (tag, job) in cases.items():
            if tag in args.skip:
                continue
            runs.setdefault(name, []).append(job())
            print(f"  round {round_number}: {name:<30}{runs[name][-1]:>8.1f} s", flush=True)
    times = {name: statistics.median(values) for name, values in runs.items()}
    print("Medians:")
    for name, seconds in times.items():
        print(f"  {name:<30}{seconds:>8.1f} s")
    batch = times.get("flowmagic BATCH")
    if batch:
        for name in times:
            if name.startswith("flowmagic"):
                continue
            print(f"  flowmagic BATCH / {name:<30}{batch / times[name]:>6.2f}")
        if "flowmagic STREAMING" in times:
            print(f"  flowmagic STREAMING / BATCH{'':<20}{times['flowmagic STREAMING'] / batch:>6.2f}")
    if "metrics" not in args.skip:
        metrics_overhead(corpus(args.metrics_size_mb), args.parallelism, spark, args.pairs)
    spark.stop()


def metrics_overhead(path: Path, parallelism: int, spark, pairs: int) -> None:
    """Live metrics on vs off, runs interleaved so that drift hits both alike; medians."""
    with_metrics, without = [], []
    for _ in range(pairs):
        with_metrics.append(flowmagic_job(path, parallelism, "BATCH", spark, True))
        without.append(flowmagic_job(path, parallelism, "BATCH", spark, False))
    on, off = statistics.median(with_metrics), statistics.median(without)
    print(f"Live metrics, BATCH WordCount over {path.stat().st_size / 2**20:.0f} MB, {pairs} interleaved pairs:")
    print(f"  median with metrics {on:.2f} s, without {off:.2f} s: overhead {on / off - 1:+.1%} (target < 3%)")


if __name__ == "__main__":
    main()
