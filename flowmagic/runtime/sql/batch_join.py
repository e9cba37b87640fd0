"""Batch joins: Flink's ``NestedLoopJoin``, ``HashJoin`` and ``AdaptiveJoin`` (a hash join the
adaptive scheduler may broadcast). Both inputs are read to their end (the build side is what
Flink reads first); then each probe row joins the build rows that satisfy the condition (a
hash join looks only at build rows of equal, non-NULL keys). An outer probe side's rows
without a match come NULL-padded; an outer build side's unmatched rows come at the end.
"""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime_ops import BatchJoinSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.operator import INSERT, SqlOperator, compile_code

__all__ = ["BatchJoin"]


@register(OperatorKind.SQL_NESTED_LOOP_JOIN, OperatorKind.SQL_HASH_JOIN, OperatorKind.SQL_ADAPTIVE_JOIN)
class BatchJoin(SqlOperator):
    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, BatchJoinSpec)
        self.condition = compile_code(spec.condition, "condition", task)
        self.rows: dict[int, list[tuple[Any, ...]]] = {1: [], 2: []}

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.rows[side].append(tuple(value[:-1]))

    def end_input(self) -> None:
        spec = self.spec
        left_nulls, right_nulls = (None,) * spec.widths[0], (None,) * spec.widths[1]
        build_side = 1 if spec.build == "left" else 2
        probe_side = 3 - build_side
        build, probe = self.rows[build_side], self.rows[probe_side]
        self.rows = {1: [], 2: []}
        join_type = spec.join_type
        outer = {1: join_type in ("left", "full"), 2: join_type in ("right", "full")}
        build_keys, probe_keys = spec.keys[build_side - 1], spec.keys[probe_side - 1]
        table: dict[tuple[Any, ...], list[int]] = {}
        for index, row in enumerate(build):
            key = tuple([row[k] for k in build_keys])
            if None not in key or not build_keys:
                table.setdefault(key, []).append(index)
        matched = [False] * len(build)
        condition = self.condition
        out = []
        for row in probe:
            key = tuple([row[k] for k in probe_keys])
            candidates = table.get(key, ()) if (None not in key or not probe_keys) else ()
            found = False
            for index in candidates:
                other = build[index]
                joined = (*row, *other, INSERT) if probe_side == 1 else (*other, *row, INSERT)
                if condition(joined) is True:
                    out.append(joined)
                    found = matched[index] = True
            if not found and outer[probe_side]:
                out.append((*row, *right_nulls, INSERT) if probe_side == 1 else (*left_nulls, *row, INSERT))
        if outer[build_side]:
            for index, row in enumerate(build):
                if not matched[index]:
                    out.append((*row, *right_nulls, INSERT) if build_side == 1 else (*left_nulls, *row, INSERT))
        if out:
            self.output.collect_batch(out)
