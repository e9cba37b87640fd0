"""Keyed SQL operators with event-time timers (windows, interval joins, event-time
deduplication): the timers live in the existing timer service, one per (time, key) and fired
in Flink's order, and go into checkpoints with the key's state."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.runtime.operators.context import TimerService
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.records import MIN_WATERMARK
from flowmagic.runtime.sql.operator import SqlOperator

__all__ = ["TimedSqlOperator"]


class TimedSqlOperator(SqlOperator):
    """A keyed SQL operator whose :meth:`on_timer` runs, key current, when the watermark
    passes a timer it registered with ``self.timers``."""

    keyed = True
    #: State and timers change only while their key is current (records' and timers').
    tracks_changes = True

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.timers = TimerService(self.backend, task.clock)
        #: The last watermark this operator received (Flink's ``currentWatermark()``).
        self.watermark = MIN_WATERMARK

    def on_timer(self, timestamp: int, key: Any) -> None:
        """An event-time timer of ``key`` fired (``key`` is current)."""
        raise NotImplementedError

    def emit_watermark(self, watermark: int) -> None:
        """Hand the watermark on (operators that hold results back emit a smaller one)."""
        self.output.emit_watermark(watermark)

    def process_watermark(self, watermark: int) -> None:
        self.watermark = watermark
        self.timers.current_watermark_value = watermark
        backend = self.keyed_state
        for timestamp, key in self.timers.due_event_timers(watermark):
            backend.current_key = key
            try:
                self.on_timer(timestamp, key)
            except Exception as error:
                raise self.fail(error, f"timer {timestamp} of key {key!r}") from error
        self.emit_watermark(watermark)

    def snapshot_keyed(self, keys: Iterable[Any] | None = None) -> dict[Any, dict[str, Any]]:
        entries = super().snapshot_keyed(keys)
        self.timers.snapshot_into(entries, keys)
        return entries

    def restore_keyed(self, entries: dict[Any, dict[str, Any]]) -> None:
        super().restore_keyed(entries)
        self.timers.restore_from(entries)
