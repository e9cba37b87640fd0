"""``assign_timestamps_and_watermarks``: event timestamps and the watermarks that follow them."""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.context import adapt
from flowmagic.runtime.operator import Operator, TaskInfo
from flowmagic.runtime.records import MAX_WATERMARK, MIN_WATERMARK
from flowmagic.runtime.registry import register

__all__ = ["TimestampsAndWatermarksOperator"]


@register(OperatorKind.TIMESTAMPS_WATERMARKS)
class TimestampsAndWatermarksOperator(Operator):
    """Assigns event timestamps and generates watermarks: in a continuous job when processing
    time moves on (Flink's periodic emission, at epoch ends), in a bounded job after every
    record that advances the watermark (a deterministic schedule).

    With ``with_idleness(timeout)``, a subtask that saw no record for ``timeout`` of
    processing time marks its output idle (Flink's ``WatermarksWithIdleness``), so that
    downstream watermarks stop waiting for it, until its next record. Only a continuous
    job's processing time moves while input is missing; a bounded job never goes idle.
    """

    def __init__(self, name: str, params: dict[str, Any], task: TaskInfo):
        super().__init__(name, params, task)
        strategy = params["strategy"]
        self.assigner = adapt(strategy.timestamp_assigner, "extract_timestamp") if strategy.timestamp_assigner else None
        # BATCH ignores watermarks until the end of input, so none are generated; nor with
        # periodic watermarks turned off (an interval of 0).
        self.lag = None if task.batch or not task.auto_watermarks else strategy.out_of_orderness_ms
        self.max_timestamp = MIN_WATERMARK
        self.current = MIN_WATERMARK
        self.idleness = None if task.batch else getattr(strategy, "idleness_ms", None)
        self.idle = False
        self.last_activity = task.clock.now()

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        if self.idleness is not None:
            self.last_activity = self.task.clock.now()
            if self.idle:
                self.idle = False
                self.output.emit_watermark_status(False)
        if self.assigner is not None:
            try:
                timestamp = int(self.assigner(value, MIN_WATERMARK if timestamp is None else timestamp))
            except Exception as error:
                raise self.fail(error, value) from error
        self.output.collect(value, timestamp)
        if self.lag is not None and timestamp is not None and timestamp > self.max_timestamp:
            self.max_timestamp = timestamp
            if not self.task.periodic_watermarks:
                self._emit()

    def _emit(self) -> None:
        watermark = self.max_timestamp - self.lag - 1 if self.lag is not None else MIN_WATERMARK
        if watermark > self.current:
            self.current = watermark
            self.output.emit_watermark(watermark)

    def advance_processing_time(self, now: int) -> None:
        if self.task.periodic_watermarks and not self.idle:
            self._emit()
        if self.idleness is not None and not self.idle and now - self.last_activity >= self.idleness:
            self.idle = True
            self.output.emit_watermark_status(True)

    def next_processing_timer(self) -> int | None:
        if self.idleness is None or self.idle:
            return None
        return self.last_activity + self.idleness

    def snapshot_progress(self) -> Any:
        return (self.max_timestamp, self.current, self.idle, self.last_activity)

    def restore_progress(self, progress: Any) -> None:
        self.max_timestamp, self.current, self.idle, self.last_activity = progress

    def process_watermark(self, watermark: int) -> None:
        # Like Flink's TimestampsAndWatermarksOperator: upstream watermarks are replaced by
        # this operator's own, except the end-of-input one.
        if watermark == MAX_WATERMARK and self.current != MAX_WATERMARK:
            self.current = MAX_WATERMARK
            self.output.emit_watermark(watermark)
