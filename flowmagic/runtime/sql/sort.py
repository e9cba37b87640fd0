"""Flink's batch Sort: a subtask's whole input, sorted by its keys, emitted at its end (the
input of a SortAggregate, say)."""

from __future__ import annotations

from functools import cmp_to_key
from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime import SortSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.operator import SqlOperator

__all__ = ["BatchSort", "row_order"]


def row_order(keys: tuple[tuple[int, bool, bool], ...]) -> Any:
    """A sort key of rows by ``(field, descending, nulls last)`` keys, as Flink orders them."""

    def compare(left: Any, right: Any) -> int:
        for index, descending, nulls_last in keys:
            a, b = left[index], right[index]
            if a == b:
                continue
            if a is None or b is None:
                return (1 if a is None else -1) if nulls_last else (-1 if a is None else 1)
            order = -1 if a < b else 1
            return -order if descending else order
        return 0

    return cmp_to_key(compare)


@register(OperatorKind.SQL_SORT)
class BatchSort(SqlOperator):
    """Sorts the subtask's rows once its input ended."""

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.order = row_order(self.sort_keys())
        self.rows: list[Any] = []

    def sort_keys(self) -> tuple[tuple[int, bool, bool], ...]:
        """The ``(field, descending, nulls last)`` keys the rows are sorted by."""
        spec = self.spec
        assert isinstance(spec, SortSpec), f"{self.name} runs in batch mode only"
        return spec.keys

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.rows.append(value)

    def process_batch(self, values: list[Any]) -> None:
        self.rows.extend(values)

    def end_input(self) -> None:
        rows, self.rows = self.rows, []
        rows.sort(key=self.order)
        self.emit_sorted(rows)

    def emit_sorted(self, rows: list[Any]) -> None:
        """Emit the subtask's rows, sorted."""
        for first in range(0, len(rows), 1024):
            self.output.collect_batch(rows[first : first + 1024])
