"""``assign_timestamps_and_watermarks``: event timestamps and the watermarks that follow them."""

from __future__ import annotations

import time
from typing import Any

from flowmagic.graph.operator_params import TimestampsWatermarksParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.operators.context import adapt
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.records import MAX_WATERMARK, MIN_WATERMARK
from flowmagic.runtime.registry import register
from flowmagic.runtime.user_metrics import MetricGroup
from flowmagic.vocabulary.watermarks import BoundedOutOfOrdernessWatermarks, Watermark, WatermarkGenerator

__all__ = ["TimestampsAndWatermarksOperator"]


class _GeneratorContext:
    """What a ``for_generator`` supplier is given: the operator's metric group."""

    def __init__(self, metrics: MetricGroup):
        self._metrics = metrics

    def get_metric_group(self) -> MetricGroup:
        return self._metrics


class _Output:
    """The generator's ``WatermarkOutput``: watermarks go on only when they advance."""

    __slots__ = ("operator",)

    def __init__(self, operator: TimestampsAndWatermarksOperator):
        self.operator = operator

    def emit_watermark(self, watermark: Watermark | int) -> None:
        timestamp = watermark.get_timestamp() if isinstance(watermark, Watermark) else int(watermark)
        self.operator.emit_generated(timestamp)

    def mark_idle(self) -> None:
        self.operator.set_idle(True)

    def mark_active(self) -> None:
        self.operator.set_idle(False)


@register(OperatorKind.TIMESTAMPS_WATERMARKS)
class TimestampsAndWatermarksOperator(Operator):
    """Assigns event timestamps and runs the strategy's watermark generator, as Flink's
    ``TimestampsAndWatermarksOperator``: ``on_event`` after each record is emitted (where a
    punctuated generator emits), ``on_periodic_emit`` every auto-watermark interval of
    processing time (where Flink's built-in generators emit). A bounded job reads the wall
    clock between records, so a small input is all read before the first periodic
    watermark, as in Flink; a continuous job emits when its epoch time moves on.

    With ``with_idleness(timeout)``, a subtask that saw no record for ``timeout`` of
    processing time marks its output idle (Flink's ``WatermarksWithIdleness``), so that
    downstream watermarks stop waiting for it, until its next record. Only a continuous
    job's processing time moves while input is missing; a bounded job never goes idle.
    """

    def __init__(self, name: str, params: TimestampsWatermarksParams, task: TaskInfo):
        super().__init__(name, params, task)
        strategy = params.strategy
        self.assigner = adapt(strategy.timestamp_assigner, "extract_timestamp") if strategy.timestamp_assigner else None
        # BATCH ignores watermarks until the end of input, so none are generated.
        self.generator: WatermarkGenerator | None = None
        if not task.batch:
            context = _GeneratorContext(MetricGroup(task.metrics, (name,)))
            try:
                self.generator = strategy.create_watermark_generator(context)
            except Exception as error:
                raise self.fail(error, has_record=False) from error
        self.watermark_output = _Output(self)
        interval = task.auto_watermark_interval_ms
        # An interval of 0 turns periodic emission off (punctuated generators still emit).
        self.periodic = self.generator is not None and interval > 0
        self.wall_clock_interval = interval / 1000 if self.periodic and not task.periodic_watermarks else None
        self.next_emit = float("inf")
        self.current = MIN_WATERMARK
        self.idleness = None if task.batch else getattr(strategy, "idleness_ms", None)
        self.idle = False
        self.last_activity = task.clock.now()

    def open(self) -> None:
        super().open()
        if self.wall_clock_interval is not None:
            # Flink registers the first periodic emission one interval after the task opens.
            self.next_emit = time.monotonic() + self.wall_clock_interval

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        if self.idleness is not None:
            self.last_activity = self.task.clock.now()
            if self.idle:
                self.set_idle(False)
        if self.assigner is not None:
            try:
                timestamp = int(self.assigner(value, MIN_WATERMARK if timestamp is None else timestamp))
            except Exception as error:
                raise self.fail(error, value) from error
        self.output.collect(value, timestamp)
        if self.generator is not None:
            try:
                self.generator.on_event(value, MIN_WATERMARK if timestamp is None else timestamp, self.watermark_output)
                if self.wall_clock_interval is not None and time.monotonic() >= self.next_emit:
                    self.generator.on_periodic_emit(self.watermark_output)
                    self.next_emit = time.monotonic() + self.wall_clock_interval
            except Exception as error:
                raise self.fail(error, value) from error

    def emit_generated(self, watermark: int) -> None:
        """A watermark from the generator: emitted if it advances the output's, which also
        makes an idle output active again (Flink's ``WatermarkToDataOutput``)."""
        if watermark > self.current:
            self.current = watermark
            if self.idle:
                self.set_idle(False)
            self.output.emit_watermark(watermark)

    def set_idle(self, idle: bool) -> None:
        if idle != self.idle:
            self.idle = idle
            self.output.emit_watermark_status(idle)

    def advance_processing_time(self, now: int) -> None:
        if self.periodic and self.task.periodic_watermarks and not self.idle:
            assert self.generator is not None
            try:
                self.generator.on_periodic_emit(self.watermark_output)
            except Exception as error:
                raise self.fail(error, has_record=False) from error
        if self.idleness is not None and not self.idle and now - self.last_activity >= self.idleness:
            self.set_idle(True)

    def next_processing_timer(self) -> int | None:
        if self.idleness is None or self.idle:
            return None
        return self.last_activity + self.idleness

    def snapshot_progress(self) -> Any:
        # Flink keeps no generator state across a restore; the built-in generator's highest
        # timestamp is kept, so that a restored job's watermarks do not start over.
        generator = self.generator
        generated = generator.max_timestamp if isinstance(generator, BoundedOutOfOrdernessWatermarks) else None
        return (generated, self.current, self.idle, self.last_activity)

    def restore_progress(self, progress: Any) -> None:
        generated, self.current, self.idle, self.last_activity = progress
        if generated is not None and isinstance(self.generator, BoundedOutOfOrdernessWatermarks):
            self.generator.max_timestamp = generated

    def process_watermark(self, watermark: int) -> None:
        # Like Flink's TimestampsAndWatermarksOperator: upstream watermarks are replaced by
        # this operator's own, except the end-of-input one.
        if watermark == MAX_WATERMARK and self.current != MAX_WATERMARK:
            self.current = MAX_WATERMARK
            self.output.emit_watermark(watermark)
