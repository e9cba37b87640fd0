"""Flink's batch WindowTableFunction: every row once per window holding its time, the row's
fields followed by ``window_start``, ``window_end`` and ``window_time`` (``window_end - 1``);
a row without a time is dropped, as Flink's WindowTableFunctionOperator drops it."""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime_ops import WindowTableFunctionSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.operator import SqlOperator
from flowmagic.runtime.sql.windows import ShiftTimeZone, tvf_windows

__all__ = ["WindowTableFunction"]


@register(OperatorKind.SQL_WINDOW_TABLE_FUNCTION)
class WindowTableFunction(SqlOperator):
    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, WindowTableFunctionSpec)
        self.window = spec.window
        self.shift = ShiftTimeZone(spec.window.zone)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.process_batch([value])

    def process_batch(self, values: list[Any]) -> None:
        window, time_field, shift = self.window, self.window.time_field, self.shift
        out = []
        for row in values:
            time = row[time_field]
            if time is None:
                continue
            fields, kind = row[:-1], row[-1]
            for start, end in tvf_windows(window, shift.to_local(time)):
                out.append((*fields, start, end, shift.to_epoch(end - 1), kind))
        if out:
            self.output.collect_batch(out)
