"""An exchange on Spark: producers' frames partitioned by consumer subtask and sorted by
channel in the JVM (see :class:`~flowmagic.runtime.wire.ChannelOrder`)."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from flowmagic.runtime.failures import unpicklable_records
from flowmagic.runtime.plan import VertexPlan
from flowmagic.runtime.records import BATCH_SIZE
from flowmagic.runtime.spark.subtask import failure_marker
from flowmagic.runtime.wire import RESULTS_SLOT, VALUES, ChannelOrder, pickle_records

__all__ = ["RESULTS_PER_FRAME", "Frames", "ResultFrames", "exchange", "lines_as_items", "sink_results"]


class Frames:
    """A producer's items of one exchange (``slot``, or every item when None) as Spark's
    PairwiseRDD wants them: a Long key, then the pickled item, for every item."""

    def __init__(self, plan: VertexPlan, slot: int, order: ChannelOrder, *, every_item: bool):
        self.slot = None if every_item else slot
        self.order = order
        # What a record that cannot be pickled is reported with (the plan itself is not kept:
        # it would be shipped again with this function).
        producer = plan.nodes[plan.out_edges[slot].source_node]
        self.operator, self.call_site = producer.name, producer.call_site
        self.vertex, self.parallelism = plan.name, plan.parallelism

    def __call__(self, items: Iterator[Any]) -> Iterator[bytes]:
        slot, order, pack = self.slot, self.order, struct.Struct("!q").pack
        for item_slot, key, payload in items:
            if slot is None or item_slot == slot:
                yield pack(order(key))
                try:
                    frame = pickle_records((key, payload))
                except Exception as error:
                    raise RuntimeError(failure_marker(self._unpicklable(error, payload))) from None
                yield frame

    def _unpicklable(self, error: Exception, payload: Any) -> dict[str, Any]:
        from pyspark import TaskContext

        context = TaskContext.get()
        index, attempt = (context.partitionId(), context.attemptNumber()) if context is not None else (0, 0)
        subtask = f"{self.vertex} ({index + 1}/{self.parallelism})"
        return unpicklable_records(error, payload, self.operator, self.call_site, subtask, attempt, pickle_records)


#: The most results of one sink a frame to the driver carries.
RESULTS_PER_FRAME = 1024


class ResultFrames:
    """A subtask's items in the result slot (and lists of them, in
    :data:`~flowmagic.runtime.wire.RESULTS_SLOT`), as :func:`sink_results` hands them to the
    driver: consecutive results of the same key in one frame ``(key, [payload, ...])``.

    A sink that prints or collects every update makes a result per record: one pickle, one
    Spark record and one unpickling on the driver each cost more than the record's trip
    through the job, a frame of many costs little more than one."""

    def __init__(self, slot: int):
        self.slot = slot

    def __call__(self, items: Iterator[Any]) -> Iterator[bytes]:
        slot, most = self.slot, RESULTS_PER_FRAME
        key: Any = None
        payloads: list[Any] = []
        for item_slot, item_key, payload in items:
            if item_slot != slot and item_slot != RESULTS_SLOT:
                continue
            if (item_key is not key and item_key != key) or len(payloads) >= most:
                if payloads:
                    yield pickle_records((key, payloads))
                key, payloads = item_key, []
            if item_slot == slot:
                payloads.append(payload)
            else:
                payloads.extend(payload)
        if payloads:
            yield pickle_records((key, payloads))


def sink_results(sc: Any, output: Any, slot: int) -> Any:
    """The RDD of ``(key, [payload, ...])`` of ``output``'s items in ``slot`` (the sinks'
    results, in the order their subtask made them; see :class:`ResultFrames`).

    They are pickled by :func:`~flowmagic.runtime.wire.pickle_records` rather than by the
    SparkContext's serializer, which pickles by reference and so cannot return records of
    classes defined in the notebook."""
    from pyspark import RDD
    from pyspark.serializers import CPickleSerializer

    frames = output.mapPartitions(ResultFrames(slot))
    frames._bypass_serializer = True
    return RDD(frames._jrdd, sc, CPickleSerializer())


def lines_as_items(lines: Iterator[str]) -> Iterator[Any]:
    """Lines Spark's Hadoop reader read, as the items a split reader consumes."""
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == BATCH_SIZE:
            yield (0, 0, 0, 0), (VALUES, batch)
            batch = []
    if batch:
        yield (0, 0, 0, 0), (VALUES, batch)


def exchange(sc: Any, producers: list[Any], parallelism: int) -> Any:
    """The items of ``producers`` (RDDs of Long/pickle frames), partitioned by consumer
    subtask and sorted by channel and sequence, in the JVM: Python only pickles each item
    once and unpickles it once, and never holds a whole partition to sort it."""
    from pyspark import RDD
    from pyspark.serializers import CPickleSerializer

    jvm = sc._jvm
    pair_rdds = []
    for frames in producers:
        # The frames are bytes already: Spark must pass them on as they are (as PySpark's
        # own partitionBy does).
        frames._bypass_serializer = True
        pair_rdds.append(jvm.PairwiseRDD(frames._jrdd.rdd()).asJavaPairRDD())
    pairs = pair_rdds[0]
    for other in pair_rdds[1:]:
        pairs = pairs.union(other)
    partitioner = jvm.PythonPartitioner(parallelism, 0)
    values = jvm.PythonRDD.valueOfPair(pairs.repartitionAndSortWithinPartitions(partitioner))
    return RDD(values, sc, CPickleSerializer())
