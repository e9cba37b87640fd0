"""Flink's WatermarkAssigner of a table's ``WATERMARK FOR rowtime AS expr``: each row's
watermark expression evaluated, the highest kept, emitted every auto-watermark interval (on
the wall clock in a bounded job, as the epochs' time moves in a continuous one; after every
row that raises it when the interval is 0); upstream
watermarks are replaced by its own but for the end of input. Rows pass unchanged."""

from __future__ import annotations

import time
from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime import WatermarkSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.records import MAX_WATERMARK, MIN_WATERMARK
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.operator import SqlOperator, compile_code

__all__ = ["WatermarkAssigner"]


@register(OperatorKind.SQL_WATERMARK_ASSIGNER)
class WatermarkAssigner(SqlOperator):
    """Generates watermarks from the rows' watermark expression."""

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, WatermarkSpec)
        self.watermark_of = compile_code(spec.code, "watermark", task)
        self.highest = MIN_WATERMARK
        self.emitted = MIN_WATERMARK
        interval = task.auto_watermark_interval_ms
        # BATCH ignores watermarks until the end of input, so none are generated.
        self.periodic = interval > 0 and not task.batch
        # Interval 0: Flink's WatermarkAssignerOperator emits after every row that raises it.
        self.per_row = interval == 0 and not task.batch
        self.wall_clock_interval = interval / 1000 if self.periodic and not task.periodic_watermarks else None
        self.next_emit = float("inf")

    def open(self) -> None:
        super().open()
        if self.wall_clock_interval is not None:
            self.next_emit = time.monotonic() + self.wall_clock_interval

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.process_batch([value])

    def process_batch(self, values: list[Any]) -> None:
        if self.per_row:
            self._process_each(values)
            return
        watermark_of = self.watermark_of
        highest = self.highest
        row = None
        try:
            for row in values:
                watermark = watermark_of(row)
                if watermark is not None and watermark > highest:
                    highest = watermark
        except Exception as error:
            raise self.fail(error, row) from error
        self.highest = highest
        self.output.collect_batch(values)
        if self.wall_clock_interval is not None and time.monotonic() >= self.next_emit:
            self._emit()
            self.next_emit = time.monotonic() + self.wall_clock_interval

    def _process_each(self, values: list[Any]) -> None:
        collect, watermark_of = self.output.collect, self.watermark_of
        for row in values:
            try:
                watermark = watermark_of(row)
            except Exception as error:
                raise self.fail(error, row) from error
            collect(row, None)
            if watermark is not None and watermark > self.highest:
                self.highest = watermark
                self._emit()

    def _emit(self) -> None:
        if self.highest > self.emitted:
            self.emitted = self.highest
            self.output.emit_watermark(self.highest)

    def advance_processing_time(self, now: int) -> None:
        if self.periodic and self.task.periodic_watermarks:
            self._emit()

    def next_processing_timer(self) -> int | None:
        return None

    def snapshot_progress(self) -> Any:
        return (self.highest, self.emitted)

    def restore_progress(self, progress: Any) -> None:
        self.highest, self.emitted = progress

    def process_watermark(self, watermark: int) -> None:
        if watermark == MAX_WATERMARK and self.emitted != MAX_WATERMARK:
            self.emitted = MAX_WATERMARK
            self.output.emit_watermark(watermark)
