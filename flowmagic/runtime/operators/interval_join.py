"""The interval join: Flink's ``IntervalJoinOperator``.

Each input's records are buffered per key and timestamp. A record joins every buffered
record of the other input whose timestamp lies within the bounds relative to its own
(``right.ts`` in ``[left.ts + lower, left.ts + upper]``), and is buffered until the watermark
passes the last time a record of the other input could still join it. A record behind the
watermark is late: dropped, or sent to its input's late-data side output. Results carry the
larger of the two timestamps.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any

from flowmagic.graph.operator_params import IntervalJoinParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.operators.context import adapt, emit_all, with_collector
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.records import MAX_WATERMARK, MIN_WATERMARK
from flowmagic.runtime.registry import register
from flowmagic.vocabulary.functions import OutputTag
from flowmagic.vocabulary.join_functions import ProcessJoinFunction

__all__ = ["IntervalJoinOperator"]

_LEFT, _RIGHT = 1, 2


class JoinContext(ProcessJoinFunction.Context):
    """The ``ctx`` of ``ProcessJoinFunction.process_element``."""

    def __init__(self, operator: IntervalJoinOperator):
        self._operator = operator
        self.left_timestamp = MIN_WATERMARK
        self.right_timestamp = MIN_WATERMARK

    def get_left_timestamp(self) -> int:
        return self.left_timestamp

    def get_right_timestamp(self) -> int:
        return self.right_timestamp

    def get_timestamp(self) -> int:
        return max(self.left_timestamp, self.right_timestamp)

    def output(self, output_tag: OutputTag, value: Any) -> None:
        self._operator.output.side(output_tag.tag_id, value, self.get_timestamp())


class _Out:
    """The ``out`` of a collector-style ProcessJoinFunction: results at the pair's timestamp."""

    __slots__ = ("_context", "_operator")

    def __init__(self, operator: IntervalJoinOperator, context: JoinContext):
        self._operator = operator
        self._context = context

    def collect(self, value: Any) -> None:
        self._operator.output.collect(value, self._context.get_timestamp())


@register(OperatorKind.INTERVAL_JOIN)
class IntervalJoinOperator(Operator):
    """Joins two keyed inputs on records' timestamps being within ``[lower, upper]`` apart."""

    keyed = True

    def __init__(self, name: str, params: IntervalJoinParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.user_function = params.function
        self.user_functions = (self.user_function,)
        self.function = with_collector(adapt(self.user_function, "process_element"), 3)
        self.lower = params.lower
        self.upper = params.upper
        self.late_tags = params.late_tags
        self.key_selectors = tuple(adapt(selector, "get_key") for selector in params.key_selectors)
        self.watermark = MIN_WATERMARK
        # side -> key -> timestamp -> records of that input, in arrival order.
        self.buffers: dict[int, dict[Any, dict[int, list[Any]]]] = {_LEFT: {}, _RIGHT: {}}
        # Cleanup timers (time, side, key), each once, as Flink's timer service keeps them.
        self.timers: list[tuple[int, int, int, Any]] = []
        self.timer_set: set[tuple[int, int, Any]] = set()
        self.sequence = 0
        self.context = JoinContext(self)
        self.out = _Out(self, self.context)

    # -- records ----------------------------------------------------------------------------

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            key = self.key_selectors[side - 1](value)
        except Exception as error:
            raise self.fail(error, value) from error
        self.keyed_state.current_key = key
        if timestamp is None or timestamp == MIN_WATERMARK:
            raise self.fail(
                ValueError(
                    "Long.MIN_VALUE timestamp: Elements used in interval stream joins need to have "
                    "timestamps meaningful timestamps."
                ),
                value,
            )
        if self.watermark != MIN_WATERMARK and timestamp < self.watermark:
            tag = self.late_tags[side - 1]
            if tag is not None:
                self.output.side(tag, value, timestamp)
            return
        ours = self.buffers[side].setdefault(key, {})
        ours.setdefault(timestamp, []).append(value)
        # Bounds of the other input's timestamps, relative to this record's.
        low, high = (self.lower, self.upper) if side == _LEFT else (-self.upper, -self.lower)
        others = self.buffers[_RIGHT if side == _LEFT else _LEFT].get(key, {})
        for other_time in sorted(others):
            if other_time < timestamp + low or other_time > timestamp + high:
                continue
            for other in others[other_time]:
                if side == _LEFT:
                    self._join(value, other, timestamp, other_time)
                else:
                    self._join(other, value, other_time, timestamp)
        self._register((timestamp + high) if high > 0 else timestamp, side, key)

    def _join(self, left: Any, right: Any, left_time: int, right_time: int) -> None:
        context = self.context
        context.left_timestamp, context.right_timestamp = left_time, right_time
        try:
            emit_all(self.function(left, right, context, self.out), self.out.collect)
        except Exception as error:
            raise self.fail(error, (left, right)) from error

    # -- cleanup ----------------------------------------------------------------------------

    def _register(self, time: int, side: int, key: Any) -> None:
        marker = (time, side, key)
        if marker in self.timer_set:
            return
        self.timer_set.add(marker)
        self.sequence += 1
        heapq.heappush(self.timers, (time, self.sequence, side, key))

    def _run_timers(self, limit: int) -> None:
        while self.timers and self.timers[0][0] <= limit:
            time, _sequence, side, key = heapq.heappop(self.timers)
            self.timer_set.discard((time, side, key))
            # The buffered timestamp this cleanup time was registered for.
            if side == _LEFT:
                buffered = time - self.upper if self.upper > 0 else time
            else:
                buffered = time + self.lower if self.lower <= 0 else time
            entries = self.buffers[side].get(key)
            if entries is not None:
                entries.pop(buffered, None)
                if not entries:
                    del self.buffers[side][key]

    def process_watermark(self, watermark: int) -> None:
        self.watermark = watermark
        self._run_timers(watermark)
        self.output.emit_watermark(watermark)

    def finish_key(self) -> None:
        # BATCH: the key's cleanup timers fire as the watermark jumps to the end of time; the
        # next key starts again without one.
        self._run_timers(MAX_WATERMARK)

    # -- checkpoints --------------------------------------------------------------------------

    def pending_timers(self) -> int:
        return len(self.timers)

    def snapshot_keyed(self, keys: Iterable[Any] | None = None) -> dict[Any, dict[str, Any]]:
        # The buffers change in ways not recorded by key (no tracks_changes): whole.
        entries = super().snapshot_keyed()
        for side, name in ((_LEFT, "@left"), (_RIGHT, "@right")):
            for key, buffered in self.buffers[side].items():
                entries.setdefault(key, {})[name] = {time: list(values) for time, values in buffered.items()}
        for time, _sequence, side, key in sorted(self.timers):
            if (time, side, key) in self.timer_set:
                entries.setdefault(key, {}).setdefault("@timers", []).append((time, side))
        return entries

    def restore_keyed(self, entries: dict[Any, dict[str, Any]]) -> None:
        super().restore_keyed(entries)
        for key, states in entries.items():
            for side, name in ((_LEFT, "@left"), (_RIGHT, "@right")):
                if name in states:
                    self.buffers[side][key] = {time: list(values) for time, values in states[name].items()}
            for time, side in states.get("@timers", []):
                self._register(time, side, key)
