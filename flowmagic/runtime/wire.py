"""The exchange's wire format: what a subtask hands on, and the order consumers read it in.

A running subtask yields items ``(slot, key, payload)``:

* ``slot`` is the producer's output edge (the index of its IntermediateDataSet),
  :data:`RESULT_SLOT` for a sink's result on its way to the driver, or :data:`RESULTS_SLOT`
  for a list of a sink's results (in the order it made them: a batch's);
* ``key`` is, for an exchange item, its channel and place in it: ``(consumer subtask,
  consumer input, producer subtask, sequence number)``; for a result, ``(node id, subtask)``;
* ``payload`` is ``(kind, data)``: :data:`VALUES` (a list of values), :data:`TIMESTAMPED` (a
  list of ``(value, timestamp)`` pairs), :data:`WATERMARK` (an int) or
  :data:`WATERMARK_STATUS` (True when the channel went idle, False when active again:
  Flink's ``WatermarkStatus``).

Every executor delivers a consumer subtask's items in :class:`ChannelOrder`: channel by
channel (input by input, producer by producer), each channel whole and in sequence, so
that runs are repeatable and identical whichever executor runs them.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

__all__ = [
    "RESULTS_SLOT",
    "RESULT_SLOT",
    "TIMESTAMPED",
    "VALUES",
    "WATERMARK",
    "WATERMARK_STATUS",
    "ChannelOrder",
    "pickle_records",
]

VALUES, TIMESTAMPED, WATERMARK, WATERMARK_STATUS = 0, 1, 2, 3

#: Slot of items that are results for the driver (sink output) instead of exchange records.
RESULT_SLOT = -1
#: Slot of items whose payload is a list of results for the driver.
RESULTS_SLOT = -2


class ChannelOrder:
    """Encodes an exchange item's key as one Long: the consumer subtask and the read order.

    Spark's PythonPartitioner sends a Long to partition ``int(key) mod P`` (its low 32 bits)
    and its sort compares whole Longs. So the low 31 bits hold the consumer subtask (mod P)
    and the low part of the sequence number, the high 31 bits the channel's rank among the
    consumer's channels (input by input, producer by producer) and the rest of the sequence.
    Sorting one consumer's items by this number reads them in channel order.
    """

    def __init__(self, parallelism: int, input_offsets: list[int], channels: int):
        self.parallelism = parallelism
        self.input_offsets = input_offsets
        self.low = (2**31 - 1) // parallelism
        self.high = 2**31 // channels

    @classmethod
    def of_consumer(cls, parallelism: int, producer_parallelisms: list[int]) -> ChannelOrder:
        """The order of a consumer with ``parallelism`` subtasks reading inputs whose
        producers have ``producer_parallelisms`` subtasks (in input order)."""
        offsets, channels = [], 0
        for count in producer_parallelisms:
            offsets.append(channels)
            channels += count
        return cls(parallelism, offsets, max(channels, 1))

    def __call__(self, key: tuple[int, int, int, int]) -> int:
        consumer, consumer_input, producer, sequence = key
        high, low = divmod(sequence, self.low)
        if high >= self.high:
            raise OverflowError(
                f"an exchange channel into subtask {consumer} carries over {self.high * self.low} buffers"
            )
        rank = self.input_offsets[consumer_input] + producer
        return ((rank * self.high + high) << 32) | (low * self.parallelism + consumer)


def pickle_records(item: Any) -> bytes:
    """Pickle records to hand them on (an exchange's buffer, a result for the driver).

    Without the memo first (twice as fast for buffers of small records): like Flink's
    serializers, it copies an object each time a buffer refers to it; only a cyclic record
    needs the memo. Records of classes no other process can import (defined in a notebook
    cell or a script's ``__main__``, which PySpark ships to executors by value with the
    functions) fail to pickle by reference; those are pickled as cloudpickle pickles them,
    with their classes by value, once per buffer.
    """
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, pickle.HIGHEST_PROTOCOL)
    pickler.fast = True
    try:
        pickler.dump(item)
    except (ValueError, RecursionError):
        try:
            return pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, AttributeError, TypeError):
            return _pickle_classes_by_value(item)
    except (pickle.PicklingError, AttributeError, TypeError):
        return _pickle_classes_by_value(item)
    return buffer.getvalue()


def _pickle_classes_by_value(item: Any) -> bytes:
    # PySpark's own cloudpickle: the one every executor has, and the one that shipped the
    # classes, so that a class keeps its identity per process (cloudpickle tracks classes
    # by id) and records of it compare equal on the driver and on executors.
    from pyspark import cloudpickle

    return cloudpickle.dumps(item, pickle.HIGHEST_PROTOCOL)
