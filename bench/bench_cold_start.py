"""Benchmark: a continuous job's cold start (a fresh Python process, no JVM yet), where the time
goes, and the same start of Spark's own Structured Streaming query, in the same run.

Each round starts two fresh processes, one after the other (their order alternating):

- flowmagic: start a SparkSession, import flowmagic, build a socket job that prints every
  line (``env.execute_async()``), and wait for its first printed line;
- Spark alone: start a SparkSession, and run a query over Spark's ``rate-micro-batch`` source
  whose Python ``foreachBatch`` collects its first batch's rows.

Both report times since their process began. flowmagic's phases: ``execute_async()`` (it
ships flowmagic to the workers and checks them with a Spark job, while the stream's frame is
made, then starts the query), then
the first epoch (the query's first batch, which starts the epoch's Python workers). Its own
share is its time to the first line less Spark's own time from session to first batch.

    python bench/bench_cold_start.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_COMMON = """
import json, os, sys, time
began = float(sys.argv[1])
times = {}
def mark(name):
    times[name] = time.time() - began
import pyspark.sql
mark("pyspark imported")
sys.path.insert(0, os.path.join(sys.argv[2], "bench"))
from warm_session import spark_session
spark = spark_session("local[2,4]")
mark("session started")
"""

_FLOWMAGIC = (
    _COMMON
    + """
import socket, threading
sys.path.insert(0, sys.argv[2])
import flowmagic
mark("flowmagic imported")
from flowmagic.runtime.spark import shipping
ship = shipping.ship_flowmagic
def timed_ship(*args, **kwargs):
    ship(*args, **kwargs)
    mark("shipped, workers checked")
shipping.ship_flowmagic = timed_ship
server = socket.create_server(("127.0.0.1", 0))
def serve():
    client, _ = server.accept()
    with client:
        for index in range(100_000):
            client.sendall(f"{index}\\n".encode())
            time.sleep(0.01)
threading.Thread(target=serve, daemon=True).start()
env = flowmagic.StreamExecutionEnvironment(parallelism=2)
env.socket_text_stream("127.0.0.1", server.getsockname()[1]).map(lambda line: line).print()
first = threading.Event()
from flowmagic import compile as passes
from flowmagic.runtime import start_continuous
job = start_continuous(
    passes.build(env.get_stream_graph("cold")).execution_graph,
    on_output=lambda output: output.printed and first.set(),
)
mark("execute_async returned")
first.wait()
mark("first line")
job.cancel()
print(json.dumps(times))
"""
)

_SPARK = (
    _COMMON
    + """
import threading
first = threading.Event()
def batch(frame, batch_id):
    if frame.collect():
        first.set()
frame = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 10).option("numPartitions", 2).load()
query = frame.writeStream.foreachBatch(batch).start()
mark("query started")
first.wait()
mark("first line")
query.stop()
print(json.dumps(times))
"""
)


def _run(script: str) -> dict[str, float]:
    began = time.time()
    done = subprocess.run(
        [sys.executable, "-c", script, repr(began), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    flowmagic_runs: list[dict[str, float]] = []
    spark_runs: list[dict[str, float]] = []
    loads = []
    for round_ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        pair = [(_FLOWMAGIC, flowmagic_runs), (_SPARK, spark_runs)]
        for script, runs in pair if round_ % 2 == 0 else reversed(pair):
            runs.append(_run(script))

    def median(runs: list[dict[str, float]], name: str) -> float:
        return statistics.median(run[name] for run in runs)

    print(f"load average (1 min) before the rounds: min {min(loads):.1f}, max {max(loads):.1f}")
    print("seconds since the process began (median of rounds)")
    for name in flowmagic_runs[0]:
        print(f"  flowmagic   {name:28s} {median(flowmagic_runs, name):7.2f}")
    for name in spark_runs[0]:
        print(f"  Spark alone {name:28s} {median(spark_runs, name):7.2f}")
    shares = [
        (run["first line"] - run["session started"]) - (spark["first line"] - spark["session started"])
        for run, spark in zip(flowmagic_runs, spark_runs, strict=True)
    ]
    print(f"flowmagic's own share (its session-to-first-line less Spark's): {statistics.median(shares):.2f} s")


if __name__ == "__main__":
    main()
