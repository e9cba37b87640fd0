"""The producer side of an exchange: pick each record's channel as Flink's partitioners do.

Records are buffered per channel and leave as one item per buffer:
``(slot, key, (kind, data))`` where ``key`` is ``(consumer subtask, consumer input, producer
subtask, sequence number)`` and ``kind`` says whether ``data`` is a list of values, a list of
``(value, timestamp)`` pairs or a watermark. Sorting by key hands each consumer subtask
every channel whole and in order, in BATCH as in STREAMING, so that runs are repeatable.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from flowmagic.graph.operator_params import KeyedAggregationParams, KeyedReduceParams
from flowmagic.graph.partitioners import BROADCAST, CUSTOM, FORWARD, GLOBAL, HASH, REBALANCE, RESCALE, SHUFFLE
from flowmagic.key_groups import assign_key_to_parallel_operator
from flowmagic.runtime.operators.context import adapt
from flowmagic.runtime.operators.operator import KeySelectorError, Operator
from flowmagic.runtime.plan import EdgePlan
from flowmagic.runtime.wire import TIMESTAMPED, VALUES, WATERMARK, WATERMARK_STATUS

__all__ = ["RecordWriter"]

_BUFFER = 1024
# Routes of this many keys are remembered (computing one takes microseconds).
_ROUTE_CACHE = 1 << 18


class RecordWriter:
    """Writes one operator's records into one exchange (one JobEdge)."""

    def __init__(self, edge: EdgePlan, producer_index: int, streaming: bool, sink: list, owner: Operator):
        self.edge = edge
        self.slot = edge.slot
        self.sink = sink
        self.owner = owner
        self.streaming = streaming
        self.producer = producer_index
        self.records_out = 0
        #: Records handed on per consumer subtask (counted per buffer, off the per-record path).
        self.sent = [0] * edge.consumer_parallelism
        self.sequence = 0
        if edge.pointwise_channels is not None:
            self.channels = edge.pointwise_channels[producer_index]
        else:
            self.channels = list(range(edge.consumer_parallelism))
        # Per consumer subtask, buffers of plain values and of (value, timestamp) pairs.
        self.values: list[list[Any]] = [[] for _ in range(edge.consumer_parallelism)]
        self.stamped: list[list[tuple[Any, int]]] = [[] for _ in range(edge.consumer_parallelism)]
        self.next_channel = producer_index
        self.method = "partition_custom" if edge.ship_strategy == CUSTOM else "key_by"
        self.select = self._selector()
        # BATCH pre-aggregation runs the consumer's own operator in this subtask, so that it
        # checks its field and names itself when it fails, as it would after the exchange.
        # Its keys come straight from the key selector (this is the hot loop of a BATCH keyed
        # job); a failure then checks the batch's keys, so that a bad key blames the key_by.
        self.combiner: Operator | None = None
        if edge.combine is not None:
            node = edge.combine
            params = node.operator.params
            assert isinstance(params, (KeyedReduceParams, KeyedAggregationParams)), f"{node.name!r} cannot combine"
            params = replace(params, key_selector=self.key_of)
            self.combiner = node.implementation(node.name, params, owner.task)
            self.combiner.output.batch_targets.append(self.emit_batch)
            self.combiner.output.seal()

    # -- channel selection ------------------------------------------------------------------

    def _selector(self) -> Callable[[Any], int]:
        strategy = self.edge.ship_strategy
        channels = self.channels
        if strategy in (FORWARD, GLOBAL):
            first = channels[0]
            return lambda value: first
        if strategy in (REBALANCE, RESCALE):
            # Rebalance starts at a random channel in Flink; this producer's index is one of
            # the starts Flink could pick, and keeps runs repeatable. Rescale starts at 0.
            self.next_channel = (self.producer - 1) % len(channels) if strategy == REBALANCE else -1
            count = len(channels)

            def round_robin(value: Any) -> int:
                self.next_channel = (self.next_channel + 1) % count
                return channels[self.next_channel]

            return round_robin
        if strategy == SHUFFLE:
            choose = random.Random(self.producer).randrange
            count = len(channels)
            return lambda value: channels[choose(count)]
        if strategy == HASH:
            return self._hash()
        if strategy == CUSTOM:
            return self._custom()
        if strategy == BROADCAST:
            return lambda value: -1
        raise ValueError(f"unknown ship strategy {strategy}")

    def _hash(self) -> Callable[[Any], int]:
        self.key_of = key_of = adapt(self.edge.key_selector, "get_key")
        self.routes: dict[Any, int] = {}
        self.hash_code = self.edge.key_hash.hash_code
        routes = self.routes
        route = self._route_key

        def select(value: Any) -> int:
            key = key_of(value)
            try:
                channel = routes.get(key)
            except TypeError:  # an unhashable key: routing says what is wrong with it
                channel = None
            return route(key) if channel is None else channel

        return select

    def _route_key(self, key: Any) -> int:
        edge = self.edge
        channel = assign_key_to_parallel_operator(
            key, edge.consumer_max_parallelism, edge.consumer_parallelism, self.hash_code
        )
        if len(self.routes) < _ROUTE_CACHE:
            self.routes[key] = channel
        return channel

    def _routable_key(self, value: Any) -> Any:
        try:
            key = self.key_of(value)
            try:
                routed = key in self.routes
            except TypeError:  # an unhashable key: routing says what is wrong with it
                routed = False
            if not routed:
                self._route_key(key)
        except Exception as error:
            raise KeySelectorError(self.method, self.edge.call_site, error) from error
        return key

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

    # -- writing ----------------------------------------------------------------------------

    def _key(self, channel: int) -> tuple:
        self.sequence += 1
        return (channel, self.edge.consumer_input, self.producer, self.sequence)

    def _flush_channel(self, channel: int) -> None:
        values = self.values[channel]
        if values:
            self.values[channel] = []
            self.sent[channel] += len(values)
            self.sink.append((self.slot, self._key(channel), (VALUES, values)))
        stamped = self.stamped[channel]
        if stamped:
            self.stamped[channel] = []
            self.sent[channel] += len(stamped)
            self.sink.append((self.slot, self._key(channel), (TIMESTAMPED, stamped)))

    def _route(self, value: Any) -> int:
        try:
            return self.select(value)
        except Exception as error:
            raise self._failure(error, value) from error

    def _failure(self, error: Exception, value: Any) -> Exception:
        # Only key selectors and custom partitioners (the user's) can fail to pick a channel.
        if self.edge.ship_strategy in (HASH, CUSTOM):
            error = KeySelectorError(self.method, self.edge.call_site, error)
        return self.owner.fail(error, value)

    def emit(self, value: Any, timestamp: int | None) -> None:
        if self.combiner is not None and timestamp is None:
            self.emit_batch([value])
            return
        channel = self._route(value)
        targets = self.channels if channel < 0 else (channel,)
        for target in targets:
            # A channel's buffer holds records of one kind: a change of kind hands it on.
            if timestamp is None:
                if self.stamped[target]:
                    self._flush_channel(target)
                buffer = self.values[target]
                buffer.append(value)
            else:
                if self.values[target]:
                    self._flush_channel(target)
                buffer = self.stamped[target]
                buffer.append((value, timestamp))
            if len(buffer) >= _BUFFER:
                self._flush_channel(target)
        self.records_out += len(targets)

    def emit_batch(self, values: list[Any]) -> None:
        if self.combiner is not None:
            try:
                self.combiner.process_batch(values)
            except Exception:
                for value in values:
                    try:
                        self._routable_key(value)
                    except KeySelectorError as error:
                        raise self.owner.fail(error, value) from error
                raise
            return
        if self.edge.ship_strategy == BROADCAST or any(self.stamped):
            for value in values:
                self.emit(value, None)
            return
        buffers = self.values
        value = None
        try:
            if self.edge.ship_strategy == HASH:
                # The hot loop of a keyed exchange, with the route cache inlined.
                key_of, routes, route = self.key_of, self.routes, self._route_key
                for value in values:
                    key = key_of(value)
                    try:
                        channel = routes.get(key)
                    except TypeError:
                        channel = None
                    buffers[route(key) if channel is None else channel].append(value)
            else:
                select = self.select
                for value in values:
                    buffers[select(value)].append(value)
        except Exception as error:
            raise self._failure(error, value) from error
        self.records_out += len(values)
        for channel in self.channels:
            if len(buffers[channel]) >= _BUFFER:
                self._flush_channel(channel)

    def emit_watermark(self, watermark: int) -> None:
        self._to_every_channel(WATERMARK, watermark)

    def emit_watermark_status(self, idle: bool) -> None:
        self._to_every_channel(WATERMARK_STATUS, idle)

    def _to_every_channel(self, kind: int, data: Any) -> None:
        # BATCH ignores watermarks: every consumer sees the end of its input as the last one.
        if not self.streaming:
            return
        for target in self.channels:
            self._flush_channel(target)
            self.sink.append((self.slot, self._key(target), (kind, data)))

    def flush(self) -> None:
        """Hand on every buffered record."""
        for channel in self.channels:
            self._flush_channel(channel)

    def finish(self) -> None:
        """Flush what BATCH pre-aggregation kept back, then every buffer."""
        if self.combiner is not None:
            combiner, self.combiner = self.combiner, None
            combiner.end_input()
        self.flush()
