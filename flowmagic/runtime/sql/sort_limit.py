"""Flink's ``SortLimit`` (``ORDER BY ... LIMIT``): in batch, the rows of the subtask sorted at
the end of its input, from the offset and at most ``fetch`` of them (the local phase keeps the
first ``offset + fetch`` for the global one); streaming, Flink's Top-N over one partition of
all rows (:class:`~flowmagic.runtime.sql.rank.Rank`)."""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime_ops import SortLimitSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.rank import Rank
from flowmagic.runtime.sql.sort import BatchSort

__all__ = ["SortLimit"]


@register(OperatorKind.SQL_SORT_LIMIT)
class SortLimit(BatchSort):
    """Sorts the subtask's rows once its input ended, and emits ``fetch`` of them from ``offset``."""

    def __new__(cls, name: str, params: SqlOperatorParams, task: TaskInfo) -> Any:
        if not isinstance(params.runtime, SortLimitSpec):
            return Rank(name, params, task)
        return super().__new__(cls)

    def sort_keys(self) -> tuple[tuple[int, bool, bool], ...]:
        spec = self.spec
        assert isinstance(spec, SortLimitSpec)
        return spec.order

    def emit_sorted(self, rows: list[Any]) -> None:
        spec = self.spec
        assert isinstance(spec, SortLimitSpec)
        rows = rows[spec.offset : spec.offset + spec.fetch]
        if rows:
            self.output.collect_batch(rows)
