"""One subtask: the fused chain of a JobVertex, run over its input inside one Spark task.

Chained operators call each other directly (no Spark stage, RDD or serialization between
them). Input channels are read in a fixed order (input by input, producer by producer), the
watermark of the subtask being the minimum over its channels, as in Flink.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from flowmagic.graph.execution_graph import ExecutionState
from flowmagic.graph.operator_params import SourceParams, TimestampsWatermarksParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.clock import WALL_CLOCK, Clock
from flowmagic.runtime.exchange import RecordWriter
from flowmagic.runtime.metric_reports import ChannelWatermark, EventTimeReport, PendingWindow
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.operators.typed_output import typed_output
from flowmagic.runtime.plan import VertexPlan
from flowmagic.runtime.records import BATCH_SIZE, MAX_WATERMARK, MIN_WATERMARK
from flowmagic.runtime.registry import implementation
from flowmagic.runtime.sorting import SortedInputs
from flowmagic.runtime.state.timer_queue import TimerQueue
from flowmagic.runtime.wire import RESULT_SLOT, RESULTS_SLOT, VALUES, WATERMARK, WATERMARK_STATUS

__all__ = ["Subtask", "SubtaskStats", "run_subtask"]


class _Pacer:
    """Sizes record batches: up to ``BATCH_SIZE`` records, fewer when a batch would take
    over ``longest`` seconds through the chain (100 ms), which keeps the live metrics
    (updated between batches) fresh even when a user function is slow."""

    def __init__(self, size: int = 64, longest: float = 0.1) -> None:
        self.size = size
        self.longest = longest

    def slices(self, values: list[Any]) -> Iterator[list[Any]]:
        start = 0
        while start < len(values):
            chunk = values[start : start + self.size]
            start += len(chunk)
            began = time.perf_counter()
            yield chunk
            self.adapt(time.perf_counter() - began)

    def adapt(self, elapsed: float) -> None:
        if elapsed < self.longest / 5 and self.size < BATCH_SIZE:
            self.size = min(self.size * 2, BATCH_SIZE)
        elif elapsed > self.longest and self.size > 1:
            self.size //= 2


@dataclass
class SubtaskStats:
    """Live counters of one subtask, read by the metrics reporter thread."""

    records_in: int = 0
    state: str = ExecutionState.DEPLOYING
    started: float = field(default_factory=time.time)
    #: The subtask's input watermark (Flink's currentInputWatermark metric).
    watermark: int = MIN_WATERMARK
    #: Counts what the subtask's chain emitted; read live, so that a long batch (a split
    #: of a file, say) still shows its progress.
    count_out: Callable[[], int] = field(default=lambda: 0, repr=False)
    #: The user metrics of the subtask's operators, read live (plain JSON data by identifier).
    user_metrics: Callable[[], dict[str, Any]] = field(default=dict, repr=False)
    #: Records handed to each consumer subtask, read live (see :meth:`_Chain.channel_counts`).
    count_channels: Callable[[], dict[str, int]] = field(default=dict, repr=False)
    #: The input channels' watermarks and earliest pending window, read live (see
    #: :meth:`Subtask.event_time`).
    event_time: Callable[[], EventTimeReport | None] = field(default=lambda: None, repr=False)

    @property
    def records_out(self) -> int:
        return self.count_out()


class _Chain:
    def __init__(self, plan: VertexPlan, info: TaskInfo, streaming: bool, buffer: list):
        self.plan = plan
        self.buffer = buffer
        self.operators: dict[int, Operator] = {}
        self.source = None
        #: Where a source's batches go: the head's output, or its timestamp assigner.
        self.source_input: Callable[[list[Any]], None] | None = None
        self.writers: list[RecordWriter] = []
        self.results = 0
        for node in plan.nodes.values():
            spec = node.operator
            if node.is_source:
                params = spec.params
                assert isinstance(params, SourceParams), f"source {node.name!r} has no source parameters"
                self.source = node.implementation(params, info)
                strategy = params.watermark_strategy
                if strategy is None:
                    operator = Operator(node.name, params, info)
                else:
                    # from_source(): Flink's SourceOperator applies the strategy itself, with
                    # no operator of its own in the graphs.
                    assigner = implementation(OperatorKind.TIMESTAMPS_WATERMARKS)
                    operator = assigner(node.name, TimestampsWatermarksParams(strategy=strategy), info)
            else:
                operator = node.implementation(node.name, spec.params, info)
                if spec.params.output_type is not None:
                    operator.output.convert = typed_output(spec.params.output_type, operator)
            self.operators[node.id] = operator
            if operator.emits_results:
                operator.emit_result, operator.emit_results = self._result_emitters(node.id, info.index)
        for node in plan.nodes.values():
            output = self.operators[node.id].output
            for target_id, tag in node.chained:
                target = self.operators[target_id]
                self._connect(output, tag, target.process, target.process_batch)
                output.watermark_targets.append(target.process_watermark)
                output.status_targets.append(target.process_watermark_status)
            for edge in node.edges:
                writer = RecordWriter(edge, info.index, streaming, buffer, self.operators[node.id])
                self.writers.append(writer)
                self._connect(output, edge.output_tag, writer.emit, writer.emit_batch)
                output.watermark_targets.append(writer.emit_watermark)
                output.status_targets.append(writer.emit_watermark_status)
            output.seal()
        self.head = self.operators[plan.head]
        self.wall_clock_pace = self._wall_clock_pace()
        if self.source is not None:
            # After seal(), which binds the output's fast paths.
            assigns = type(self.head) is not Operator
            self.source_input = self.head.process_batch if assigns else self.head.output.collect_batch

    def _wall_clock_pace(self) -> float | None:
        """The shortest interval (s) of the operators that act on the wall clock between
        records (periodic watermark generators) and follow other operators in the chain;
        None if there are none.

        In Flink a record crosses the whole chain before the next one is read, so such an
        operator sees each record as soon as the operators before it are done with it. Here
        it sees a batch once they are done with all of it: batches are then kept short
        against its interval (see :class:`Subtask`)."""
        upstream: dict[int, set[int]] = {node_id: set() for node_id in self.plan.nodes}
        for node_id in self.plan.chain_order:
            for target_id, _tag in self.plan.nodes[node_id].chained:
                upstream[target_id] |= upstream[node_id] | {node_id}
        intervals = [
            interval
            for node_id, before_ids in upstream.items()
            if (interval := self.operators[node_id].wall_clock_interval) is not None
            and any(not self.plan.nodes[before].is_source for before in before_ids)
        ]
        return min(intervals, default=None)

    @staticmethod
    def _connect(output: Any, tag: str | None, target: Any, batch_target: Any) -> None:
        if tag is None:
            output.targets.append(target)
            output.batch_targets.append(batch_target)
        else:
            output.side_targets.setdefault(tag, []).append(target)

    def _result_emitters(self, node_id: int, index: int) -> tuple[Callable[[Any], None], Callable[[list[Any]], None]]:
        append, key = self.buffer.append, (node_id, index)

        def emit(payload: Any) -> None:
            self.results += 1
            append((RESULT_SLOT, key, payload))

        def emit_all(payloads: list[Any]) -> None:
            if payloads:
                self.results += len(payloads)
                append((RESULTS_SLOT, key, payloads))

        return emit, emit_all

    def open(self) -> None:
        # Flink opens a chain from its tail, so every operator's successors are ready.
        for node_id in reversed(self.plan.chain_order):
            self.operators[node_id].open()

    def finish(self) -> None:
        for node_id in self.plan.chain_order:
            self.operators[node_id].end_input()
        for writer in self.writers:
            writer.finish()
        for node_id in self.plan.chain_order:
            self.operators[node_id].close()

    @property
    def records_out(self) -> int:
        """Records the chain emitted: into exchanges and, from its sinks, to the driver."""
        return self.results + sum(writer.records_out for writer in self.writers)

    def channel_counts(self) -> dict[str, int]:
        """Records handed on per channel, as ``{"<consumer vertex id>/<consumer subtask>": n}``
        (channels that carried none left out): what the live view colours channels by."""
        counts: dict[str, int] = {}
        for writer in self.writers:
            for subtask, sent in enumerate(writer.sent):
                if sent:
                    key = f"{writer.edge.consumer}/{subtask}"
                    counts[key] = counts.get(key, 0) + sent
        return counts


class Subtask:
    """One subtask: its chain, and the watermarks of its input channels.

    A bounded job runs it once, over all of its input (:func:`run_subtask`); a continuous
    job keeps it from epoch to epoch and runs it over each epoch's input.
    """

    def __init__(
        self,
        plan: VertexPlan,
        index: int,
        attempt: int,
        stats: SubtaskStats,
        clock: Clock = WALL_CLOCK,
        *,
        periodic_watermarks: bool = False,
        run_id: str | None = None,
    ):
        self.plan = plan
        self.index = index
        self.stats = stats
        self.info = TaskInfo(
            plan.name,
            index,
            plan.parallelism,
            plan.max_parallelism,
            attempt,
            plan.batch,
            clock,
            periodic_watermarks,
            job_parameters=plan.job_parameters,
            auto_watermark_interval_ms=plan.auto_watermark_interval_ms,
            dialect=plan.dialect,
            run_id=run_id,
        )
        self.buffer: list[tuple[int, Any, Any]] = []
        self.chain = _Chain(plan, self.info, not plan.batch, self.buffer)
        self.sides = [input_plan.side for input_plan in plan.inputs]
        self.channels = {
            (input_plan.index, producer): MIN_WATERMARK
            for input_plan in plan.inputs
            for producer in input_plan.partitions[index]
        }
        self.watermark = MIN_WATERMARK
        #: Flink's StatusWatermarkValve: channels whose producer went idle, channels whose
        #: watermark is not counted (idle, or active again but behind the subtask's), and
        #: whether the subtask itself is idle (every channel is).
        self.idle_channels: set[tuple[int, int]] = set()
        self.unaligned: set[tuple[int, int]] = set()
        self.idle = False
        #: Per channel, since when (seconds since the epoch) its watermark stands or it is idle.
        started = time.time()
        self.channel_since = dict.fromkeys(self.channels, started)
        #: Records read and emitted before this object's life (a continuous job's subtask
        #: restored from an epoch's snapshot goes on counting from there).
        self.records_in_before = 0
        self.records_out_before = 0
        #: Per operator (node id), key -> key group of the keys it snapshots (a continuous
        #: job's epochs).
        self.groups_of_keys: dict[int, dict[Any, int]] = {}
        #: Snapshots of changes written since the last whole one (None: none written yet).
        self.deltas_since_full: int | None = None
        pace = self.chain.wall_clock_pace
        # Batches through an operator on the wall clock last at most a tenth of its interval,
        # from one record up: its actions then come at most that much later than in Flink.
        self.pacer = _Pacer() if pace is None else _Pacer(size=1, longest=pace / 10)
        # BATCH keyed input is held until it is complete, then replayed key by key.
        self.sorter = SortedInputs(plan.sorted_inputs, self.chain.head) if plan.sorted_inputs else None
        self.rebind(stats)

    def snapshot_progress(self) -> dict[str, Any]:
        """Where the subtask stands that is not operator state: its input channels'
        watermarks and statuses, its record counts, and each operator's
        :meth:`~flowmagic.runtime.operators.operator.Operator.snapshot_progress` (a continuous job's
        epochs keep it from one to the next; savepoints do not)."""
        operators = {}
        for node_id, operator in self.chain.operators.items():
            position = operator.snapshot_progress()
            if position is not None:
                operators[node_id] = position
        return {
            "channels": self.channels,
            "watermark": self.watermark,
            "statuses": (self.idle_channels, self.unaligned, self.idle),
            "records_in": self.records_in_before,
            "records_out": self.records_out_before + self.chain.records_out,
            "operators": operators,
        }

    def restore_progress(self, progress: dict[str, Any]) -> None:
        """Take up the position of :meth:`snapshot_progress`."""
        self.channels.update(progress["channels"])
        self.watermark = progress["watermark"]
        self.idle_channels, self.unaligned, self.idle = progress["statuses"]
        self.records_in_before = progress["records_in"]
        self.records_out_before = progress["records_out"]
        for node_id, position in progress["operators"].items():
            self.chain.operators[node_id].restore_progress(position)

    def snapshot_is_whole(self, whole_every: int) -> bool:
        """Whether the next snapshot writes the whole state rather than its changes: the
        first one, and then one in ``whole_every``."""
        return self.deltas_since_full is None or self.deltas_since_full + 1 >= whole_every

    def snapshot_written(self, whole: bool) -> None:
        """A snapshot was written (whole, or the changes since the last)."""
        self.deltas_since_full = 0 if whole else (self.deltas_since_full or 0) + 1

    def rebind(self, stats: SubtaskStats) -> None:
        """Report to ``stats`` from now on (a continuous job's next epoch has its own)."""
        self.stats = stats
        stats.count_out = lambda: self.chain.records_out
        stats.count_channels = self.chain.channel_counts
        stats.user_metrics = self.info.metrics.values
        stats.event_time = self.event_time
        stats.watermark = self.watermark

    def open(self) -> None:
        self.chain.open()
        self.stats.state = ExecutionState.RUNNING

    def _drain(self) -> Iterator[tuple[int, Any, Any]]:
        if self.buffer:
            yield from self.buffer
            self.buffer.clear()

    def read_source(self, batches: Iterable[list[Any]]) -> Iterator[tuple[int, Any, Any]]:
        """Push a source's batches through the chain; yield what it outputs as it goes."""
        collect_batch = self.chain.source_input
        assert collect_batch is not None, "read_source() on a chain without a source"
        for batch in batches:
            for chunk in self.pacer.slices(batch):
                collect_batch(chunk)
                yield from self._drain()

    def consume(self, items: Iterable[Any]) -> Iterator[tuple[int, Any, Any]]:
        """Read exchange items channel by channel; the subtask's watermark is the minimum over
        its channels."""
        head, stats, sides, channels = self.chain.head, self.stats, self.sides, self.channels
        process, steps = head.process, head.process_batch_in_steps
        sorter = self.sorter
        for key, (kind, data) in items:
            side = sides[key[1]]
            if sorter is not None and kind != WATERMARK:
                sorter.add_all(side, data, stamped=kind != VALUES)
                stats.records_in += len(data)
                continue
            if kind == WATERMARK:
                channel = (key[1], key[2])
                if channel not in self.idle_channels and data > channels.get(channel, MIN_WATERMARK):
                    channels[channel] = data
                    self.channel_since[channel] = time.time()
                    if channel in self.unaligned and data >= self.watermark:
                        self.unaligned.discard(channel)
                    self._advance_watermark()
                continue
            if kind == WATERMARK_STATUS:
                self._channel_status((key[1], key[2]), data)
                continue
            if kind == VALUES:
                for chunk in self.pacer.slices(data) if side == 0 else (data,):
                    if side == 0:
                        for _step in steps(chunk):
                            yield from self._drain()
                    else:
                        for value in chunk:
                            process(value, None, side)
                    stats.records_in += len(chunk)
            else:
                for value, timestamp in data:
                    process(value, timestamp, side)
                stats.records_in += len(data)
            # Records leave as soon as they are made: serialized while still in the CPU cache,
            # and a subtask never holds more than a batch's worth.
            yield from self._drain()

    def _advance_watermark(self) -> None:
        """The minimum over the aligned channels, when it moves forward."""
        unaligned = self.unaligned
        counted = [watermark for channel, watermark in self.channels.items() if channel not in unaligned]
        if counted and min(counted) > self.watermark:
            self.watermark = self.stats.watermark = min(counted)
            self.chain.head.process_watermark(self.watermark)

    def _channel_status(self, channel: tuple[int, int], idle: bool) -> None:
        """A producer went idle or active again (as Flink's StatusWatermarkValve takes it)."""
        channels, head = self.channels, self.chain.head
        if idle != (channel in self.idle_channels):
            self.channel_since[channel] = time.time()
        if idle and channel not in self.idle_channels:
            self.idle_channels.add(channel)
            self.unaligned.add(channel)
            if len(self.idle_channels) == len(channels):
                # No channel will move on: the most advanced one's watermark is the subtask's.
                if channels[channel] == self.watermark and max(channels.values()) > self.watermark:
                    self.watermark = self.stats.watermark = max(channels.values())
                    head.process_watermark(self.watermark)
                self.idle = True
                head.process_watermark_status(True)
            elif channels[channel] == self.watermark:
                self._advance_watermark()
        elif not idle and channel in self.idle_channels:
            self.idle_channels.discard(channel)
            if channels[channel] >= self.watermark:
                self.unaligned.discard(channel)
            if self.idle:
                self.idle = False
                head.process_watermark_status(False)

    def event_time(self) -> EventTimeReport:
        """Its input channels' watermarks and its operators' earliest event-time timer: why
        a window has not fired yet (read by the metrics reporter's thread: copies first)."""
        producers = {input_plan.index: input_plan.producer for input_plan in self.plan.inputs}
        idle, since = set(self.idle_channels), dict(self.channel_since)
        channels = [
            ChannelWatermark(gate, producers[gate], producer, watermark, channel in idle, since[channel])
            for channel, watermark in list(self.channels.items())
            for gate, producer in (channel,)
        ]
        pending = None
        for node_id in self.plan.chain_order:
            operator = self.chain.operators[node_id]
            timers = getattr(operator, "event_timers", None)
            timer = timers.peek() if isinstance(timers, TimerQueue) else None
            if timer is not None and (pending is None or timer.timestamp < pending.fires_at):
                window = timer.namespace
                pending = PendingWindow(
                    operator.name,
                    repr(timer.key)[:80],
                    getattr(window, "start", None),
                    getattr(window, "end", None),
                    timer.timestamp,
                )
        return EventTimeReport(channels, pending)

    def advance_processing_time(self, now: int) -> Iterator[tuple[int, Any, Any]]:
        """Fire every operator's processing-time timers due by ``now``, head first."""
        for node_id in self.plan.chain_order:
            self.chain.operators[node_id].advance_processing_time(now)
        yield from self._drain()

    def next_processing_timer(self) -> int | None:
        """When the chain's earliest processing-time timer is due (None: none is set)."""
        due = [self.chain.operators[node_id].next_processing_timer() for node_id in self.plan.chain_order]
        return min((timestamp for timestamp in due if timestamp is not None), default=None)

    def emit_watermark(self, watermark: int) -> Iterator[tuple[int, Any, Any]]:
        """A source's watermark (``MAX_WATERMARK`` at its end) into the chain."""
        self.chain.head.output.emit_watermark(watermark)
        yield from self._drain()

    def end_of_input(self) -> Iterator[tuple[int, Any, Any]]:
        """The end of all input: held sorted input, the final watermark if it did not come,
        then the chain ends."""
        if self.sorter is not None:
            for _key in self.sorter.replay():
                yield from self._drain()
        if self.chain.source is None and self.watermark != MAX_WATERMARK:
            self.watermark = self.stats.watermark = MAX_WATERMARK
            self.chain.head.process_watermark(MAX_WATERMARK)
        self.chain.finish()
        yield from self._drain()

    def flush(self, checkpoint: bool = False) -> Iterator[tuple[int, Any, Any]]:
        """Hand on what the epoch made, and every buffered record (the end of a
        continuous job's epoch, ``checkpoint`` if it completes a checkpoint)."""
        for node_id in self.plan.chain_order:
            self.chain.operators[node_id].prepare_snapshot(checkpoint)
        for writer in self.chain.writers:
            writer.flush()
        yield from self._drain()


def run_subtask(
    plan: VertexPlan, index: int, attempt: int, items: Iterable[Any], stats: SubtaskStats
) -> Iterator[tuple[int, Any, Any]]:
    """Run subtask ``index`` of ``plan`` over its input ``items``; yield the items it outputs."""
    subtask = Subtask(plan, index, attempt, stats)
    subtask.open()
    source = subtask.chain.source
    if source is not None:
        yield from subtask.read_source(source.batches())
        yield from subtask.emit_watermark(MAX_WATERMARK)
    else:
        yield from subtask.consume(items)
    yield from subtask.end_of_input()
