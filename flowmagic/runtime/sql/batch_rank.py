"""Ranking over sorted partitions in batch: Flink's ``Rank`` (local phase: rows of rank at most
the range's end; global phase: rows in range, with the rank if the output has it) and
``OverAggregate`` (ROW_NUMBER, RANK, DENSE_RANK over ``ROWS BETWEEN UNBOUNDED PRECEDING AND
CURRENT ROW``). Their input comes sorted by partition keys then order keys (a Sort before
them), so a partition is a run of rows with equal partition keys, rows tie on equal order keys.
"""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime_ops import BatchRankSpec, OverAggregateSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.operator import SqlOperator
from flowmagic.runtime.sql.rank import Rank

__all__ = ["BatchRank", "OverAggregate"]


class _Ranks:
    """Row numbers, ranks and dense ranks of consecutive rows of sorted partitions."""

    def __init__(self, partition: tuple[int, ...], order: tuple[int, ...]):
        self.partition = partition
        self.order = order
        self.last_partition: Any = object()
        self.last_order: Any = object()
        self.row_number = self.rank = self.dense_rank = 0

    def next(self, row: Any) -> None:
        partition = tuple([row[i] for i in self.partition])
        order = tuple([row[i] for i in self.order])
        if partition != self.last_partition:
            self.last_partition, self.last_order = partition, order
            self.row_number = self.rank = self.dense_rank = 1
            return
        self.row_number += 1
        if order != self.last_order:
            self.last_order = order
            self.rank = self.row_number
            self.dense_rank += 1

    def value(self, function: str) -> int:
        if function == "ROW_NUMBER":
            return self.row_number
        if function == "RANK":
            return self.rank
        return self.dense_rank


@register(OperatorKind.SQL_RANK)
class BatchRank(SqlOperator):
    """Batch Rank; a streaming plan's Rank is :class:`~flowmagic.runtime.sql.rank.Rank`."""

    def __new__(cls, name: str, params: SqlOperatorParams, task: TaskInfo) -> Any:
        if not isinstance(params.runtime, BatchRankSpec):
            return Rank(name, params, task)
        return super().__new__(cls)

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, BatchRankSpec)
        self.ranks = _Ranks(spec.partition, spec.order)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.process_batch([value])

    def process_batch(self, values: list[Any]) -> None:
        spec, ranks = self.spec, self.ranks
        out = []
        for row in values:
            ranks.next(row)
            rank = ranks.value(spec.function)
            if rank > spec.rank_end or rank < spec.rank_start:
                continue
            out.append((*row[:-1], rank, row[-1]) if spec.output_rank else row)
        if out:
            self.output.collect_batch(out)


@register(OperatorKind.SQL_OVER_AGGREGATE)
class OverAggregate(SqlOperator):
    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, OverAggregateSpec)
        self.ranks = _Ranks(spec.partition, spec.order)
        self.calls = spec.calls

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.process_batch([value])

    def process_batch(self, values: list[Any]) -> None:
        ranks, calls = self.ranks, self.calls
        out = []
        for row in values:
            ranks.next(row)
            out.append((*row[:-1], *(ranks.value(c) for c in calls), row[-1]))
        self.output.collect_batch(out)
