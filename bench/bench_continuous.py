"""Benchmark: the continuous mode on one SparkSession, against Structured Streaming by hand.

Run: ``.venv/bin/python bench/bench_continuous.py [--seconds 20] [--rounds 1] [--only TEXT] [--master URL]
[--burners N]`` (``--burners``: N processes keep a core busy each, for a loaded machine).
Measures, with every case on the same session (``local[2]``, or ``--master``'s: a standalone
cluster's ``spark://host:port``) and, with ``--rounds N``, interleaved rounds compared by their
medians:

- keyed running count over 1,000 keys (a data generator as fast as epochs admit):
  records/s with the updates going to a sink that keeps nothing (``add_sink``), and with every
  update printed (each one travels to the notebook);
- PySpark Structured Streaming doing the same count by hand: rate source ->
  ``groupBy(key).count()`` in update mode into the ``noop`` sink (processed rows/s);
- the same count as a Python stateful processor, ``transformWithStateInPandas`` (RocksDB state);
- how long a savepoint, then a stop with a savepoint that drains, take to answer during an
  unthrottled keyed count (its epochs as large as admission control lets them grow);
- latency: from a line entering a socket (10,000 lines/s) to its printed update reaching the
  notebook, median and p95; and how long after its end a 5 s processing-time window's result
  arrives;
- start, on the warm session (its first bounded job ran, and the warm-up that job started in
  the background ended: how long after the job is printed): from starting a socket job (its graph built too, as
  ``execute_async()`` does) to its first printed line reaching the notebook; and for a job of
  2 s processing-time windows, to its first window's result, with how many seconds of input
  that window held (lines carry the time they were sent);
- the epoch overhead: epochs of a job whose source brings nothing (the clock alone), and of one
  with a trickle of input through one exchange (a Spark job of two stages each epoch), against
  PySpark's own micro-batches of the same trickle through one shuffle;
- the state snapshot of an epoch at 100,000 keys (pickled by key group, written, as an epoch does):
  whole, and of the 1,000 keys an epoch changed (what epochs write between whole snapshots);
  the same for 100,000 keys in event-time windows (a window and its timers per key).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from warm_session import warm_session

import flowmagic
from flowmagic import compile as passes
from flowmagic.runtime import start_continuous

KEYS = 1000


def _run(env: flowmagic.StreamExecutionEnvironment, seconds: float, vertex_name: str, printed: bool) -> float:
    """Records/s into the vertex named ``vertex_name`` over ``seconds``, after the first epochs."""
    graph = passes.build(env.get_stream_graph("bench")).execution_graph
    lines = [0]

    def count(output) -> None:
        lines[0] += len(output.printed)

    job = start_continuous(graph, on_output=count if printed else None)
    try:
        while job.epochs < 3:
            time.sleep(0.05)
        vertex = next(v for v in graph.vertices.values() if v.name.startswith(vertex_name))

        def records() -> int:
            return sum(s.records_in for s in job.monitor.vertices[vertex.id])

        start_records, started = records(), time.time()
        time.sleep(seconds)
        return (records() - start_records) / (time.time() - started)
    finally:
        job.cancel()


def flowmagic_count(seconds: float, printed: bool) -> float:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    counts = env.from_datagen(lambda i: (i % KEYS, 1)).key_by(lambda pair: pair[0]).sum(1)
    if printed:
        counts.print()
    else:
        counts.add_sink(lambda record: None)
    return _run(env, seconds, "Keyed Aggregation", printed)


def savepoint_and_stop(seconds: float) -> tuple[float, float]:
    """Seconds a savepoint, and then a stop with a savepoint that drains, take to answer
    during an unthrottled keyed count (its epochs grown by admission control for ``seconds``)."""
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_datagen(lambda i: (i % KEYS, 1)).key_by(lambda pair: pair[0]).sum(1).add_sink(lambda record: None)
    job = start_continuous(passes.build(env.get_stream_graph("savepoints")).execution_graph)
    directory = tempfile.mkdtemp(prefix="bench-savepoints-")
    try:
        time.sleep(seconds)
        started = time.time()
        job.trigger_savepoint(os.path.join(directory, "one"))
        savepoint = time.time() - started
        started = time.time()
        job.stop_with_savepoint(True, os.path.join(directory, "two"))
        return savepoint, time.time() - started
    finally:
        job.cancel()


def _processed_rows_per_second(counts, checkpoint: str, seconds: float) -> float:
    """Run a streaming aggregation into the ``noop`` sink for ``seconds``: the median rows/s
    its batches processed (the first batch left out)."""
    query = counts.writeStream.outputMode("update").format("noop").option("checkpointLocation", checkpoint).start()
    try:
        time.sleep(seconds)
        rates = [p["processedRowsPerSecond"] for p in query.recentProgress if p.get("numInputRows")]
        return statistics.median(rates[1:] or rates) if rates else 0.0
    finally:
        query.stop()


def pyspark_count(spark, seconds: float) -> float:
    from pyspark.sql import functions

    rate = spark.readStream.format("rate").option("rowsPerSecond", 400_000).option("numPartitions", 2).load()
    counts = rate.groupBy((functions.col("value") % KEYS).alias("key")).count()
    checkpoint = tempfile.mkdtemp(prefix="bench-ss-")
    return _processed_rows_per_second(counts, checkpoint, seconds)


def pyspark_transform_with_state(spark, seconds: float) -> float:
    """The same running count as a Python stateful processor (``transformWithStateInPandas``,
    RocksDB state), emitting every update (vectorized per key and batch): rows/s processed."""
    import numpy
    import pandas
    from pyspark.sql import functions
    from pyspark.sql.streaming import StatefulProcessor

    class RunningCount(StatefulProcessor):
        def init(self, handle) -> None:
            self.count = handle.getValueState("count", "count LONG")

        def handleInputRows(self, key, rows, timerValues):
            # Every update, as the Flink job emits them: the running count after each row.
            count = (self.count.get() or (0,))[0]
            for frame in rows:
                counts = numpy.arange(count + 1, count + len(frame) + 1)
                count += len(frame)
                yield pandas.DataFrame({"key": key[0], "count": counts})
            self.count.update((count,))

        def close(self) -> None:
            pass

    spark.conf.set(
        "spark.sql.streaming.stateStore.providerClass",
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    )
    rate = spark.readStream.format("rate").option("rowsPerSecond", 100_000).option("numPartitions", 2).load()
    counts = (
        rate.select((functions.col("value") % KEYS).alias("key"))
        .groupBy("key")
        .transformWithStateInPandas(RunningCount(), "key LONG, count LONG", "Update", "None")
    )
    checkpoint = tempfile.mkdtemp(prefix="bench-tws-")
    return _processed_rows_per_second(counts, checkpoint, seconds)


class _Sender:
    """Sends ``rate`` lines per second to one client of a TCP server on 127.0.0.1, each line
    its number and the wall-clock time it was sent (ms)."""

    def __init__(self, rate: int):
        import socket
        import threading

        self.rate = rate
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._send, daemon=True).start()

    def _send(self) -> None:
        client, _address = self.server.accept()
        sent, started = 0, time.time()
        with client:
            while not self.stop.is_set():
                due = int((time.time() - started) * self.rate)
                lines = "".join(f"{index},{int(time.time() * 1000)}\n" for index in range(sent, due))
                if lines:
                    try:
                        client.sendall(lines.encode())
                    except OSError:
                        return  # the job ended and closed its connection
                sent = due
                time.sleep(0.005)

    def close(self) -> None:
        self.stop.set()
        self.server.close()


def latency(seconds: float, rate: int = 10_000) -> tuple[float, float]:
    """Median and p95 seconds from a line entering the socket to its printed update reaching
    the notebook (the job's output callback), for a keyed running count at ``rate`` lines/s."""
    sender = _Sender(rate)
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    (
        env.socket_text_stream("127.0.0.1", sender.port)
        .map(lambda line: (int(line.split(",")[0]) % KEYS, int(line.split(",")[1]), 1))
        .key_by(lambda event: event[0])
        .reduce(lambda total, event: (event[0], event[1], total[2] + event[2]))
        .print()
    )
    graph = passes.build(env.get_stream_graph("latency")).execution_graph
    delays: list[float] = []
    measuring = [False]

    def arrived(output) -> None:
        now = time.time() * 1000
        if measuring[0]:
            delays.extend((now - int(line.split(",")[1])) / 1000 for _err, line in output.printed)

    job = start_continuous(graph, on_output=arrived)
    try:
        # Warm-up: epochs admit few records at first (admission control), and the backlog
        # of the first seconds is not what a running job sees.
        while job.epochs < 5:
            time.sleep(0.05)
        time.sleep(5)
        measuring[0] = True
        time.sleep(seconds)
    finally:
        job.cancel()
        sender.close()
    delays.sort()
    return statistics.median(delays), delays[int(len(delays) * 0.95)]


def window_delay(windows: int = 3) -> float:
    """Median seconds from the end of a 5 s processing-time window to its result reaching the
    notebook, with a trickle of input (a line every 100 ms)."""
    sender = _Sender(10)
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)

    class WindowEnd(flowmagic.ProcessWindowFunction):
        def process(self, key, context, elements):
            yield (key, context.window().end)

    (
        env.socket_text_stream("127.0.0.1", sender.port)
        .map(lambda line: (0, 1))
        .key_by(lambda pair: pair[0])
        .window(flowmagic.TumblingProcessingTimeWindows.of(flowmagic.Time.seconds(5)))
        .process(WindowEnd())
        .print()
    )
    graph = passes.build(env.get_stream_graph("window delay")).execution_graph
    delays: list[float] = []

    def arrived(output) -> None:
        now = time.time() * 1000
        delays.extend((now - int(line.strip(")").split(",")[1])) / 1000 for _err, line in output.printed)

    job = start_continuous(graph, on_output=arrived)
    try:
        while len(delays) < windows + 1:
            time.sleep(0.05)
    finally:
        job.cancel()
        sender.close()
    # The first window started before the job: only later ones are whole.
    return statistics.median(delays[1:])


def start_to_first_line() -> float:
    """Seconds from starting a socket job (100 lines/s, each printed) to its first printed
    line reaching the notebook."""
    sender = _Sender(100)
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.socket_text_stream("127.0.0.1", sender.port).map(lambda line: line).print()
    first: list[float] = []

    def arrived(output) -> None:
        if output.printed and not first:
            first.append(time.time())

    started = time.time()
    job = start_continuous(passes.build(env.get_stream_graph("start")).execution_graph, on_output=arrived)
    try:
        while not first:
            time.sleep(0.01)
    finally:
        job.cancel()
        sender.close()
    return first[0] - started


def start_to_first_window() -> tuple[float, float]:
    """Seconds from starting a socket job of 2 s processing-time windows (1,000 lines/s) to
    its first window's result reaching the notebook, and the seconds of input that window
    held (from its first line's sending to its last's)."""
    sender = _Sender(1000)
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)

    class Span(flowmagic.ProcessWindowFunction):
        def process(self, key, context, elements):
            sent = [element[1] for element in elements]
            yield (min(sent), max(sent))

    (
        env.socket_text_stream("127.0.0.1", sender.port)
        .map(lambda line: (0, int(line.split(",")[1])))
        .key_by(lambda pair: pair[0])
        .window(flowmagic.TumblingProcessingTimeWindows.of(flowmagic.Time.seconds(2)))
        .process(Span())
        .print()
    )
    first: list[tuple[float, str]] = []

    def arrived(output) -> None:
        if output.printed and not first:
            first.append((time.time(), output.printed[0][1]))

    started = time.time()
    job = start_continuous(passes.build(env.get_stream_graph("start window")).execution_graph, on_output=arrived)
    try:
        while not first:
            time.sleep(0.01)
    finally:
        job.cancel()
        sender.close()
    arrived_at, line = first[0]
    earliest, latest = (int(value) for value in line.split("> ", 1)[-1].strip("()").split(","))
    return arrived_at - started, (latest - earliest) / 1000


def _epoch_period(env: flowmagic.StreamExecutionEnvironment, seconds: float) -> float:
    """Seconds per epoch of ``env``'s job over ``seconds``, after its first epochs."""
    job = start_continuous(passes.build(env.get_stream_graph("epochs")).execution_graph)
    try:
        while job.epochs < 3:
            time.sleep(0.05)
        first, started = job.epochs, time.time()
        time.sleep(seconds)
        return (time.time() - started) / max(job.epochs - first, 1)
    finally:
        job.cancel()


def epoch_overhead(seconds: float) -> float:
    """Seconds between epochs of a job that reads nothing (a socket nobody writes to)."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as server:
        env = flowmagic.StreamExecutionEnvironment(parallelism=2)
        env.socket_text_stream("127.0.0.1", server.getsockname()[1]).map(lambda line: line).print()
        return _epoch_period(env, seconds)


def epoch_period_with_input(seconds: float) -> float:
    """Seconds between epochs of a job with a trickle of input (20 records/s) through one
    exchange: every epoch runs a Spark job of two stages."""
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_datagen(lambda i: (i % 10, 1), rows_per_second=20).key_by(lambda pair: pair[0]).sum(1).add_sink(
        lambda record: None
    )
    return _epoch_period(env, seconds)


def pyspark_batch_period_with_input(spark, seconds: float) -> float:
    """The same trickle through PySpark's own shuffle (rate source, ``groupBy().count()``,
    update mode, ``noop`` sink): median seconds between the starts of its micro-batches."""
    from datetime import datetime

    from pyspark.sql import functions

    rate = spark.readStream.format("rate").option("rowsPerSecond", 20).option("numPartitions", 2).load()
    counts = rate.groupBy((functions.col("value") % 10).alias("key")).count()
    checkpoint = tempfile.mkdtemp(prefix="bench-ss-")
    query = counts.writeStream.outputMode("update").format("noop").option("checkpointLocation", checkpoint).start()
    try:
        time.sleep(seconds)
        starts = [datetime.fromisoformat(p["timestamp"].rstrip("Z")) for p in query.recentProgress]
        periods = [(b - a).total_seconds() for a, b in itertools.pairwise(starts[2:])]
        return statistics.median(periods) if periods else 0.0
    finally:
        query.stop()


def snapshot_seconds(keys: int, changed: int | None) -> float:
    """One subtask's epoch snapshot of a keyed count over ``keys`` keys: whole
    (``changed`` None), or of the ``changed`` keys an epoch updated, as epochs write them."""
    from flowmagic.graph.operator_params import Aggregation, KeyedAggregationParams
    from flowmagic.graph.operators import OperatorKind
    from flowmagic.runtime.continuous.state_store import write_keyed
    from flowmagic.runtime.continuous.storage import Storage
    from flowmagic.runtime.operators.operator import TaskInfo
    from flowmagic.runtime.registry import implementation

    params = KeyedAggregationParams(key_selector=lambda pair: pair[0], aggregation=Aggregation.SUM, position=1)
    operator = implementation(OperatorKind.KEYED_AGGREGATION)("sum", params, TaskInfo("v", 0, 1, 128, 0, False))
    operator.track_changes()
    operator.process_batch([(key, 1) for key in range(keys)])
    root = Storage(tempfile.mkdtemp(prefix="bench-state-"))
    groups: dict = {}
    # The first snapshot is whole, and learns every key's group.
    write_keyed(root, "first", "op", 0, 0, range(0, 128), 128, operator.snapshot_keyed(), groups, checksums={})
    operator.take_changed_keys()
    operator.process_batch([(key, 1) for key in range(changed or 0)])
    started = time.perf_counter()
    keys_changed = operator.take_changed_keys() if changed is not None else None
    entries = operator.snapshot_keyed(keys_changed)
    write_keyed(root, "epoch", "op", 0, 0, range(0, 128), 128, entries, groups, checksums={})
    return time.perf_counter() - started


def window_snapshot_seconds(keys: int, changed: int | None) -> float:
    """As :func:`snapshot_seconds`, of a keyed sum in one-minute event-time windows."""
    from flowmagic.graph.operator_params import Aggregation, WindowFunctionKind, WindowParams
    from flowmagic.graph.operators import OperatorKind
    from flowmagic.runtime.continuous.state_store import write_keyed
    from flowmagic.runtime.continuous.storage import Storage
    from flowmagic.runtime.operators.operator import TaskInfo
    from flowmagic.runtime.registry import implementation

    assigner = flowmagic.TumblingEventTimeWindows.of(flowmagic.Time.minutes(1))
    params = WindowParams(
        key_selector=lambda pair: pair[0],
        assigner=assigner,
        trigger=assigner.default_trigger(),
        evictor=None,
        allowed_lateness=0,
        late_tag=None,
        stamps_firing_time=False,
        function_kind=WindowFunctionKind.AGGREGATION,
        aggregation=Aggregation.SUM,
        position=1,
    )
    operator = implementation(OperatorKind.WINDOW)("window", params, TaskInfo("v", 0, 1, 128, 0, False))
    operator.track_changes()
    operator.open()
    for key in range(keys):
        operator.process((key, 1), 1_000)
    root = Storage(tempfile.mkdtemp(prefix="bench-state-"))
    groups: dict = {}
    write_keyed(root, "first", "op", 0, 0, range(0, 128), 128, operator.snapshot_keyed(), groups, checksums={})
    operator.take_changed_keys()
    for key in range(changed or 0):
        operator.process((key, 1), 2_000)
    started = time.perf_counter()
    keys_changed = operator.take_changed_keys() if changed is not None else None
    entries = operator.snapshot_keyed(keys_changed)
    write_keyed(root, "epoch", "op", 0, 0, range(0, 128), 128, entries, groups, checksums={})
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--only", default="", help="run only the cases whose name contains this text (or one of several, split by |)"
    )
    parser.add_argument("--master", default="local[2,4]", help="Spark's master URL (spark://host:port: a cluster)")
    parser.add_argument(
        "--burners",
        type=int,
        default=0,
        help="processes that keep a core busy while the cases run (each adds about 1 to the load average)",
    )
    args = parser.parse_args()
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdout=subprocess.DEVNULL)
        for _ in range(args.burners)
    ]
    try:
        _cases(args)
    finally:
        for burner in burners:
            burner.kill()


def _cases(args: argparse.Namespace) -> None:
    # A warm session, as a notebook's after its first job: the JVM and flowmagic's workers started.
    spark, warming = warm_session(args.master, **{"spark.sql.shuffle.partitions": "2"})
    print(f"the warm-up after the first bounded job ended {warming:.1f} s after it")
    seconds = args.seconds
    cases: dict[str, Callable[[], float | tuple[float, float]]] = {
        "start to the first printed line (s)": start_to_first_line,
        "start to the first 2 s window, and its input (s)": start_to_first_window,
        "flowmagic count, updates to a sink": lambda: flowmagic_count(seconds, False),
        "flowmagic count, every update printed": lambda: flowmagic_count(seconds, True),
        "PySpark groupBy().count(), update mode": lambda: pyspark_count(spark, seconds),
        "PySpark transformWithStateInPandas count": lambda: pyspark_transform_with_state(spark, seconds),
        "socket to printed update, median and p95 (s)": lambda: latency(seconds),
        "unthrottled count: savepoint, then drain, answered in (s)": lambda: savepoint_and_stop(seconds),
        "5 s processing-time window, result after its end (s)": window_delay,
        "epoch period, no input (s)": lambda: epoch_overhead(seconds / 2),
        "epoch period, a trickle through 1 exchange (s)": lambda: epoch_period_with_input(seconds / 2),
        "PySpark batch period, a trickle through 1 shuffle (s)": lambda: pyspark_batch_period_with_input(
            spark, seconds / 2
        ),
        "snapshot of 100,000 keys, whole (s)": lambda: snapshot_seconds(100_000, None),
        "snapshot of 100,000 keys, 1,000 changed (s)": lambda: snapshot_seconds(100_000, 1_000),
        "snapshot of 100,000 keys in windows, whole (s)": lambda: window_snapshot_seconds(100_000, None),
        "snapshot of 100,000 keys in windows, 1,000 changed (s)": lambda: window_snapshot_seconds(100_000, 1_000),
    }
    results: dict[str, list[float]] = {}
    loads: list[float] = []
    for _round in range(args.rounds):
        for name, case in cases.items():
            if not any(text in name for text in args.only.split("|")):
                continue
            loads.append(os.getloadavg()[0])
            value = case()
            if isinstance(value, tuple) and "then drain" in name:
                results.setdefault(name.replace(", then drain,", ""), []).append(value[0])
                results.setdefault(name.replace("savepoint, then drain", "drain"), []).append(value[1])
            elif isinstance(value, tuple) and "median and p95" in name:
                median, p95 = value
                results.setdefault(name.replace("median and p95", "median"), []).append(median)
                results.setdefault(name.replace("median and p95", "p95"), []).append(p95)
            elif isinstance(value, tuple):
                results.setdefault(name.replace(", and its input", ""), []).append(value[0])
                results.setdefault(
                    name.replace("start to the first 2 s window, and its", "first 2 s window's"), []
                ).append(value[1])
            else:
                results.setdefault(name, []).append(value)
    medians = {name: statistics.median(values) for name, values in results.items()}
    low, middle, high = min(loads), statistics.median(loads), max(loads)
    print(f"load average (1 min) before the cases: min {low:.1f}, median {middle:.1f}, max {high:.1f}")
    for name, value in medians.items():
        print(f"{name:55s} {value:>14,.3f}")
    for numerator, denominator, label in (
        ("flowmagic count, updates to a sink", "PySpark groupBy().count(), update mode", "PySpark count"),
        (
            "flowmagic count, updates to a sink",
            "PySpark transformWithStateInPandas count",
            "transformWithStateInPandas",
        ),
        (
            "epoch period, a trickle through 1 exchange (s)",
            "PySpark batch period, a trickle through 1 shuffle (s)",
            "PySpark's own micro-batch with a shuffle",
        ),
    ):
        if medians.get(numerator) and medians.get(denominator):
            print(f"ratio {numerator} / {label}: {medians[numerator] / medians[denominator]:.2f}")


if __name__ == "__main__":
    main()
