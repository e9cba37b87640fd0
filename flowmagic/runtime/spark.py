"""The Spark glue: every ExecutionJobVertex becomes Spark tasks, one per subtask.

A vertex is one ``mapPartitionsWithIndex`` over either ``parallelism`` empty partitions
(sources read their own share) or the shuffle of its inputs, partitioned by consumer
subtask (partition ``i`` is subtask ``i``) and sorted by channel in the JVM. The whole job
is one Spark action run under a job group, so it can be cancelled. This is the only module
that imports pyspark.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import re
import struct
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from flowmagic.errors import JobCancelledError, JobFailedError
from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.runtime.exchange import VALUES
from flowmagic.runtime.metrics import JobMonitor, MetricsServer, Reporter
from flowmagic.runtime.operators import UserFunctionError
from flowmagic.runtime.plan import VertexPlan, build_plans
from flowmagic.runtime.records import BATCH_SIZE
from flowmagic.runtime.task import RESULT_SLOT, SubtaskStats, run_subtask

__all__ = ["get_spark_session", "run_on_spark"]

_FAILURE_MARK = "FLOWMAGIC-FAILURE "
_QUIET_LOG4J = os.path.join(os.path.dirname(__file__), "log4j2-quiet.properties")


def get_spark_session(spark: Any = None) -> Any:
    """``spark``, else the active SparkSession, else a new embedded ``local[*]`` one."""
    if spark is not None:
        return spark
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # Workers must run the notebook's own Python, where flowmagic and its dependencies are.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[*]")
        .appName("flowmagic")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.python.worker.reuse", "true")
        # flowmagic reports task failures itself; Spark's JVM stack traces are noise in a cell.
        .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile={_QUIET_LOG4J}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    return session


_SHIPPED: set[str] = set()


def _ship_flowmagic(sc: Any) -> None:
    """Make flowmagic importable on executors that do not have it installed (a cluster)."""
    if sc.applicationId in _SHIPPED:
        return
    import tempfile
    import zipfile

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    archive = os.path.join(tempfile.mkdtemp(prefix="flowmagic-"), "flowmagic.zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bundle:
        for root, directories, files in os.walk(package):
            directories[:] = [d for d in directories if d != "__pycache__"]
            for name in files:
                path = os.path.join(root, name)
                bundle.write(path, os.path.relpath(path, os.path.dirname(package)))
    sc.addPyFile(archive)
    _SHIPPED.add(sc.applicationId)


class _SubtaskFunction:
    """The function Spark runs for each partition (= subtask) of one vertex."""

    def __init__(self, plan: VertexPlan, address: tuple[str, int] | None, secret: str):
        self.plan = plan
        self.address = address
        self.secret = secret

    def __call__(self, index: int, items: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        context = TaskContext.get()
        attempt = context.attemptNumber() if context is not None else 0
        stats = SubtaskStats()
        reporter = Reporter(self.address, self.secret, self.plan.id, index, attempt, stats)
        try:
            yield from run_subtask(self.plan, index, attempt, items, stats)
        except GeneratorExit:
            reporter.finish("CANCELED")
            raise
        except UserFunctionError as error:
            reporter.finish("FAILED", error.details)
            raise RuntimeError(_FAILURE_MARK + json.dumps(error.details)) from None
        except BaseException:
            reporter.finish("FAILED")
            raise
        reporter.finish("FINISHED")


class _ChannelOrder:
    """Encodes an exchange item's key as the Long that Spark partitions and sorts it by.

    Spark's PythonPartitioner sends a Long to partition ``int(key) mod P`` (its low 32 bits)
    and the sort compares whole Longs. So the low 31 bits hold the consumer subtask (mod P)
    and the low part of the sequence number, the high 31 bits the channel's rank among the
    consumer's channels (input by input, producer by producer) and the rest of the sequence.
    """

    def __init__(self, parallelism: int, input_offsets: list[int], channels: int):
        self.parallelism = parallelism
        self.input_offsets = input_offsets
        self.low = (2**31 - 1) // parallelism
        self.high = 2**31 // channels

    def __call__(self, key: tuple[int, int, int, int]) -> int:
        consumer, consumer_input, producer, sequence = key
        high, low = divmod(sequence, self.low)
        if high >= self.high:
            raise OverflowError(
                f"an exchange channel into subtask {consumer} carries over {self.high * self.low} buffers"
            )
        rank = self.input_offsets[consumer_input] + producer
        return ((rank * self.high + high) << 32) | (low * self.parallelism + consumer)


class _Frames:
    """A producer's items of one exchange as Spark's PairwiseRDD wants them: a Long key,
    then the pickled item, for every item."""

    def __init__(self, slot: int | None, order: _ChannelOrder):
        self.slot = slot
        self.order = order

    def __call__(self, items: Iterator[Any]) -> Iterator[bytes]:
        slot, order, pack = self.slot, self.order, struct.Struct("!q").pack
        for item_slot, key, payload in items:
            if slot is None or item_slot == slot:
                yield pack(order(key))
                yield _pickle_records((key, payload))


def _pickle_records(item: Any) -> bytes:
    """Pickle without the memo (twice as fast for buffers of small records). Like Flink's
    serializers, it copies an object each time a buffer refers to it; only a cyclic record
    needs the memo."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, pickle.HIGHEST_PROTOCOL)
    pickler.fast = True
    try:
        pickler.dump(item)
    except (ValueError, RecursionError):
        return pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
    return buffer.getvalue()


class _SlotFilter:
    def __init__(self, slot: int):
        self.slot = slot

    def __call__(self, items: Iterator[Any]) -> Iterator[Any]:
        slot = self.slot
        for item_slot, key, payload in items:
            if item_slot == slot:
                yield key, payload


def _lines_as_items(lines: Iterator[str]) -> Iterator[Any]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == BATCH_SIZE:
            yield (0, 0, 0, 0), (VALUES, batch)
            batch = []
    if batch:
        yield (0, 0, 0, 0), (VALUES, batch)


def _exchange(sc: Any, producers: list[Any], parallelism: int) -> Any:
    """The items of ``producers`` (RDDs of Long/pickle frames), partitioned by consumer
    subtask and sorted by channel and sequence, in the JVM: Python only pickles each item
    once and unpickles it once, and never holds a whole partition to sort it."""
    from pyspark import RDD
    from pyspark.serializers import CPickleSerializer

    jvm = sc._jvm
    pairs = None
    for frames in producers:
        # The frames are bytes already: Spark must pass them on as they are (as PySpark's
        # own partitionBy does).
        frames._bypass_serializer = True
        pair_rdd = jvm.PairwiseRDD(frames._jrdd.rdd()).asJavaPairRDD()
        pairs = pair_rdd if pairs is None else pairs.union(pair_rdd)
    partitioner = jvm.PythonPartitioner(parallelism, 0)
    values = jvm.PythonRDD.valueOfPair(pairs.repartitionAndSortWithinPartitions(partitioner))
    return RDD(values, sc, CPickleSerializer())


def _channel_orders(graph: ExecutionGraph, plans: dict[str, VertexPlan]) -> dict[str, _ChannelOrder]:
    orders = {}
    for vertex_id, plan in plans.items():
        offsets, channels = [], 0
        for input_plan in plan.inputs:
            offsets.append(channels)
            channels += graph.vertices[input_plan.producer].parallelism
        orders[vertex_id] = _ChannelOrder(plan.parallelism, offsets, max(channels, 1))
    return orders


def _build(graph: ExecutionGraph, plans: dict[str, VertexPlan], sc: Any, server: MetricsServer | None) -> Any:
    from pyspark import StorageLevel

    orders = _channel_orders(graph, plans)
    inputs: dict[str, list[Any]] = {vertex_id: [] for vertex_id in graph.vertices}
    terminal = []
    for vertex in graph.vertices.values():
        plan = plans[vertex.id]
        parallelism = vertex.parallelism
        if plan.remote_text_path is not None:
            # Hadoop's reader (hdfs://, s3a://, ...) runs in the JVM; its partitions become
            # the split readers' input, one per subtask.
            lines = sc.textFile(plan.remote_text_path, parallelism).coalesce(parallelism)
            shuffled = lines.mapPartitions(_lines_as_items)
        elif plan.inputs:
            shuffled = _exchange(sc, inputs[vertex.id], parallelism)
        else:
            shuffled = sc.parallelize(range(parallelism), parallelism)
        address, secret = (server.address, server.secret) if server is not None else (None, "")
        output = shuffled.mapPartitionsWithIndex(_SubtaskFunction(plan, address, secret))
        output.setName(vertex.name)
        results = plan.has_results or not plan.out_edges
        if len(plan.out_edges) + results > 1:
            output = output.persist(StorageLevel.MEMORY_AND_DISK)
        for edge, dataset in zip(plan.out_edges, vertex.job_vertex.produced_datasets, strict=True):
            (job_edge,) = dataset.consumers
            consumer = job_edge.target_vertex
            if plans[consumer].remote_text_path is not None:
                # The monitor lists nothing for a remote path; it still runs, as a terminal.
                terminal.append(output.mapPartitions(_SlotFilter(RESULT_SLOT)))
                continue
            only = len(plan.out_edges) == 1 and not results
            inputs[consumer].append(output.mapPartitions(_Frames(None if only else edge.slot, orders[consumer])))
        if results:
            terminal.append(output.mapPartitions(_SlotFilter(RESULT_SLOT)))
    return terminal[0] if len(terminal) == 1 else sc.union(terminal)


def _failure_from(error: BaseException, monitor: JobMonitor) -> dict[str, Any] | None:
    match = re.search(re.escape(_FAILURE_MARK) + r"(\{.*?\})\s*$", str(error), re.MULTILINE)
    if match:
        try:
            return json.loads(match.group(1))
        except ValueError:
            pass
    return monitor.failures[-1] if monitor.failures else None


def _with_source_lines(lines: list[str]) -> list[str]:
    """Add the source of frames the executor could not show: code of notebook cells exists in
    the driver's ``linecache`` only."""
    import linecache

    shown: list[str] = []
    for position, line in enumerate(lines):
        shown.append(line)
        frame = re.match(r'\s*File "(.+)", line (\d+), in ', line)
        has_source = position + 1 < len(lines) and lines[position + 1].startswith("    ")
        if frame and not has_source:
            source = linecache.getline(frame.group(1), int(frame.group(2))).strip()
            if source:
                shown.append(f"    {source}")
    return shown


def _failure_message(failure: dict[str, Any] | None, error: BaseException) -> str:
    if failure is None:
        text = str(error)
        python_errors = re.findall(r"^(\w+(?:Error|Exception|Exit)\b.*)$", text, re.MULTILINE)
        lines = [line for line in text.splitlines() if line.strip()]
        cause = python_errors[-1] if python_errors else (lines[0] if lines else type(error).__name__)
        return f"The job failed in Spark: {cause}"
    trace = "\n".join(_with_source_lines(failure.get("traceback", [])))
    record = f"\n  record:   {failure['record']}" if failure.get("record") is not None else ""
    return (
        f"Job failed: {failure['exception']}\n"
        f"  operator: {failure['operator']}\n"
        f"  subtask:  {failure['subtask']} (attempt {failure['attempt']}){record}\n"
        f"Traceback of the user function (most recent call last):\n{trace}"
    )


def run_on_spark(
    graph: ExecutionGraph,
    monitor: JobMonitor,
    *,
    spark: Any = None,
    on_progress: Callable[[JobMonitor], None] | None = None,
    progress_interval: float = 0.4,
    cancel_event: threading.Event | None = None,
    metrics: bool = True,
) -> list[tuple[tuple[int, int], Any]]:
    """Run ``graph`` on Spark; return the sinks' results as ``((node id, subtask), payload)``."""
    session = get_spark_session(spark)
    sc = session.sparkContext
    _ship_flowmagic(sc)
    plans = build_plans(graph)
    host = sc.getConf().get("spark.driver.host", "127.0.0.1")
    server = MetricsServer(host, monitor) if metrics else None
    group = f"flowmagic-{uuid.uuid4().hex[:12]}"
    outcome: dict[str, Any] = {}

    def action() -> None:
        sc.setJobGroup(group, f"flowmagic: {graph.job_name}", interruptOnCancel=True)
        try:
            outcome["results"] = _build(graph, plans, sc, server).collect()
        except BaseException as error:
            outcome["error"] = error

    try:
        monitor.state = "RUNNING"
        monitor.start_time = time.time()
        monitor.mark("SCHEDULED")
        worker = threading.Thread(target=action, name=f"flowmagic-job-{group}", daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(progress_interval)
                if cancel_event is not None and cancel_event.is_set():
                    raise KeyboardInterrupt
                if on_progress is not None:
                    on_progress(monitor)
        except KeyboardInterrupt:
            monitor.state = "CANCELING"
            sc.cancelJobGroup(group)
            worker.join(30)
            monitor.mark("CANCELED")
            monitor.state = "CANCELED"
            raise JobCancelledError(f"Job {graph.job_name!r} was cancelled.") from None
        if "error" in outcome:
            error = outcome["error"]
            failure = _failure_from(error, monitor)
            monitor.mark("CANCELED")
            monitor.state = "FAILED"
            raise JobFailedError(_failure_message(failure, error), failure) from None
        if server is not None:
            monitor.wait_for_reports(1.0)
        monitor.mark("FINISHED")
        monitor.state = "FINISHED"
        return outcome["results"]
    finally:
        monitor.end_time = time.time()
        if server is not None:
            server.close()
        if on_progress is not None:
            on_progress(monitor)
