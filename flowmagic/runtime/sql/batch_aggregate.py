"""Flink's batch aggregates (HashAggregate, SortAggregate): a subtask's groups accumulated
over its whole input, emitted (``+I``) at its end. The local phase emits each group's
accumulators (one field per call, after the keys), the global phase merges them; a one-phase
aggregate does both. Hash and sort strategies give the same groups, so both run by hashing."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime import AggregateSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.aggregate_functions import AggregateFunction, Count, Sum, aggregate_function
from flowmagic.runtime.sql.operator import INSERT, SqlOperator

__all__ = ["BatchAggregate"]


@register(OperatorKind.SQL_HASH_AGGREGATE, OperatorKind.SQL_SORT_AGGREGATE)
class BatchAggregate(SqlOperator):
    """A batch aggregate's phase: ``local``, ``global`` or ``single``."""

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, AggregateSpec)
        self.phase = spec.phase
        self.functions = [aggregate_function(c, False) for c in spec.calls]
        self.grouping = spec.grouping
        width = len(spec.grouping)
        self.calls: list[tuple[AggregateFunction, int | None, int | None]]
        if self.phase == "global":
            # The local phase's rows: the keys, then one accumulator per call.
            self.grouping = tuple(range(width))
            self.calls = [(f, width + i, None) for i, f in enumerate(self.functions)]
        else:
            self.calls = [
                (f, c.args[0] if c.args else None, c.filter) for f, c in zip(self.functions, spec.calls, strict=True)
            ]
        self.groups: dict[Any, list[Any]] = {}
        self.scalar_keys = False
        self.fold = self._fast_fold() or self._fold

    def _fast_fold(self) -> Any:
        """The tight loop of the local or one-phase aggregate of plain COUNTs and SUMs."""
        if self.phase == "global" or not all(
            type(f) in (Count, Sum) and not f.spec.distinct and c is None for f, _, c in self.calls
        ):
            return None
        grouping = self.grouping
        lines = ["def fold(rows, groups):", "    get = groups.get", "    for r in rows:"]
        # One key field: the field itself is the group's key (no tuple per row).
        self.scalar_keys = len(grouping) == 1
        key = f"r[{grouping[0]}]" if self.scalar_keys else "(" + "".join(f"r[{g}], " for g in grouping) + ")"
        lines.append(f"        key = {key}")
        lines.append("        acc = get(key)")
        lines.append("        if acc is None:")
        lines.append(f"            acc = groups[key] = [{', '.join(_create(f) for f, _, _ in self.calls)}]")
        for index, (function, arg, _) in enumerate(self.calls):
            if isinstance(function, Sum):
                lines.append(f"        v = r[{arg}]")
                lines.append("        if v is not None:")
                lines.append(f"            a = acc[{index}]")
                lines.append("            a[0] += v")
                lines.append("            a[1] += 1")
            elif arg is None:
                lines.append(f"        acc[{index}] += 1")
            else:
                lines.append(f"        if r[{arg}] is not None:")
                lines.append(f"            acc[{index}] += 1")
        namespace: dict[str, Any] = {"Decimal": Decimal}
        exec(compile("\n".join(lines) + "\n", f"<flowmagic SQL {self.name}>", "exec"), namespace)
        return namespace["fold"]

    def _fold(self, rows: list[Any], groups: dict[Any, list[Any]]) -> None:
        grouping, calls, merging = self.grouping, self.calls, self.phase == "global"
        for row in rows:
            key = tuple([row[g] for g in grouping])
            accumulators = groups.get(key)
            if accumulators is None:
                accumulators = groups[key] = [f.create() for f, _, _ in calls]
            for index, (function, arg, condition) in enumerate(calls):
                if condition is not None and row[condition] is not True:
                    continue
                if merging:
                    accumulators[index] = function.merge(accumulators[index], row[arg])
                    continue
                argument = None if arg is None else row[arg]
                if arg is not None and argument is None:
                    continue
                accumulators[index] = function.add(accumulators[index], argument)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.process_batch([value])

    def process_batch(self, values: list[Any]) -> None:
        try:
            self.fold(values, self.groups)
        except Exception as error:
            raise self.fail(error, has_record=False) from error

    def end_input(self) -> None:
        groups, self.groups = self.groups, {}
        if self.scalar_keys:
            groups = {(key,): accumulators for key, accumulators in groups.items()}
        if not groups and not self.grouping and self.phase != "local":
            # A global aggregate without groups has one row even over no input.
            groups[()] = [f.create() for f in self.functions]
        if self.phase == "local":
            rows = [(*key, *accumulators, INSERT) for key, accumulators in groups.items()]
        else:
            functions = self.functions
            rows = [
                (*key, *(f.value(a) for f, a in zip(functions, accumulators, strict=True)), INSERT)
                for key, accumulators in groups.items()
            ]
        for first in range(0, len(rows), 1024):
            self.output.collect_batch(rows[first : first + 1024])


def _create(function: Any) -> str:
    """Source of a fresh accumulator of a COUNT (0) or a SUM (``[zero, 0]``)."""
    if isinstance(function, Sum):
        return f"[{function.zero!r}, 0]"
    return "0"
