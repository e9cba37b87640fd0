"""The producer side of an exchange: pick each record's channel as Flink's partitioners do.

A writer turns records into ``(slot, key, (value, timestamp))`` items; Spark's shuffle then
moves each item to the consumer subtask ``key`` names (``key[0]`` when the key also carries
the input and producer used to keep the consumer's channel order deterministic).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from flowmagic.compile.key_groups import assign_key_to_parallel_operator
from flowmagic.graph.partitioners import BROADCAST, CUSTOM, FORWARD, GLOBAL, HASH, REBALANCE, RESCALE, SHUFFLE
from flowmagic.runtime.context import adapt
from flowmagic.runtime.operators import Operator, reduce_function_of
from flowmagic.runtime.plan import EdgePlan
from flowmagic.runtime.records import Watermark

__all__ = ["RecordWriter"]


class RecordWriter:
    """Writes one operator's records into one exchange (one JobEdge)."""

    def __init__(self, edge: EdgePlan, producer_index: int, streaming: bool, sink: list, owner: Operator):
        self.edge = edge
        self.slot = edge.slot
        self.buffer = sink
        self.owner = owner
        self.records_out = 0
        parallelism = edge.consumer_parallelism
        if edge.pointwise_channels is not None:
            self.channels = edge.pointwise_channels[producer_index]
        else:
            self.channels = list(range(parallelism))
        # The key names the consumer subtask, the consumer's input and, for STREAMING (whose
        # consumers read their channels in a fixed order), the producer subtask.
        if streaming:
            self.keys = [(c, edge.consumer_input, producer_index) for c in range(parallelism)]
        else:
            self.keys = [(c, edge.consumer_input) for c in range(parallelism)]
        self.streaming = streaming
        self.next_channel = producer_index
        self.random = random.Random(producer_index)
        self.select = self._selector()
        self.combiner: dict[Any, Any] | None = None
        if edge.combine is not None:
            self.combiner = {}
            self.combine = reduce_function_of(edge.combine.params)
            self.combine_key = edge.combine["key_selector"]
        self.emit = self._emit_combining if self.combiner is not None else self._emit
        self.emit_batch = self._emit_batch_combining if self.combiner is not None else self._emit_batch

    def _selector(self) -> Callable[[Any], int]:
        strategy = self.edge.ship_strategy
        channels = self.channels
        if strategy in (FORWARD, GLOBAL):
            first = channels[0]
            return lambda value: first
        if strategy in (REBALANCE, RESCALE):

            def round_robin(value: Any) -> int:
                self.next_channel = (self.next_channel + 1) % len(channels)
                return channels[self.next_channel]

            # Rebalance starts at a random channel in Flink; this producer's index is one of
            # the starts Flink could pick, and keeps runs repeatable. Rescale starts at 0.
            self.next_channel = (self.next_channel - 1) % len(channels) if strategy == REBALANCE else -1
            return round_robin
        if strategy == SHUFFLE:
            choose = self.random.randrange
            count = len(channels)
            return lambda value: channels[choose(count)]
        if strategy == HASH:
            key_selector = adapt(self.edge.key_selector, "get_key")
            max_parallelism, parallelism = self.edge.consumer_max_parallelism, self.edge.consumer_parallelism
            return lambda value: assign_key_to_parallel_operator(key_selector(value), max_parallelism, parallelism)
        if strategy == CUSTOM:
            return self._custom()
        if strategy == BROADCAST:
            return lambda value: -1
        raise ValueError(f"unknown ship strategy {strategy}")

    def _custom(self) -> Callable[[Any], int]:
        partition = adapt(self.edge.custom_function, "partition")
        key_selector = adapt(self.edge.key_selector, "get_key")
        count = self.edge.consumer_parallelism

        def select(value: Any) -> int:
            channel = partition(key_selector(value), count)
            if not isinstance(channel, int) or not 0 <= channel < count:
                raise ValueError(f"custom partitioner returned {channel!r}, not a channel in [0, {count})")
            return channel

        return select

    def _emit(self, value: Any, timestamp: int | None) -> None:
        try:
            channel = self.select(value)
        except Exception as error:
            raise self.owner.fail(error, value) from error
        if channel < 0:
            for target in self.channels:
                self.buffer.append((self.slot, self.keys[target], (value, timestamp)))
            self.records_out += len(self.channels)
        else:
            self.buffer.append((self.slot, self.keys[channel], (value, timestamp)))
            self.records_out += 1

    def _emit_batch(self, values: list[Any]) -> None:
        select, keys, append, slot = self.select, self.keys, self.buffer.append, self.slot
        if self.edge.ship_strategy == BROADCAST:
            for value in values:
                self._emit(value, None)
            return
        try:
            for value in values:
                append((slot, keys[select(value)], (value, None)))
        except Exception as error:
            raise self.owner.fail(error, value) from error
        self.records_out += len(values)

    def _emit_combining(self, value: Any, timestamp: int | None) -> None:
        self._emit_batch_combining([value])

    def _emit_batch_combining(self, values: list[Any]) -> None:
        state, key_of, combine = self.combiner, self.combine_key, self.combine
        try:
            for value in values:
                key = key_of(value)
                state[key] = combine(state[key], value) if key in state else value
        except Exception as error:
            raise self.owner.fail(error, value) from error

    def emit_watermark(self, watermark: int) -> None:
        # BATCH ignores watermarks: every consumer sees the end of its input as the last one.
        if not self.streaming:
            return
        marker = (Watermark(watermark), None)
        for target in self.channels:
            self.buffer.append((self.slot, self.keys[target], marker))

    def finish(self) -> None:
        """Flush what BATCH pre-aggregation kept back."""
        if self.combiner:
            partials, self.combiner = list(self.combiner.values()), {}
            self._emit_batch(partials)
