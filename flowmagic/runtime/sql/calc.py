"""Row-at-a-time SQL operators: Calc (projection and filter), Expand, the sink's NOT NULL
ConstraintEnforcer and Exchange-free pass-throughs; kinds pass through unchanged."""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from flowmagic.errors import JobError
from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime import CalcSpec, ExpandSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.operator import SqlOperator, compile_code
from flowmagic.runtime.sql.values import parse_type

__all__ = ["Calc", "ConstraintEnforcer", "Expand"]


class _BatchFunction(SqlOperator):
    """Applies a generated ``function(rows) -> rows`` to each batch."""

    function_name = ""

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        assert isinstance(self.spec, CalcSpec | ExpandSpec)
        self.function = compile_code(self.spec.code, self.function_name, task)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            rows = self.function([value])
        except Exception as error:
            raise self.fail(error, value) from error
        collect = self.output.collect
        for row in rows:
            collect(row, timestamp)

    def process_batch(self, values: list[Any]) -> None:
        try:
            rows = self.function(values)
        except Exception as error:
            raise self._failure(error, values) from error
        if rows:
            self.output.collect_batch(rows)

    def _failure(self, error: Exception, values: list[Any]) -> Exception:
        # Find the row at fault, to name it.
        for value in values:
            try:
                self.function([value])
            except Exception as culprit:
                return self.fail(culprit, value)
        return self.fail(error, has_record=False)


@register(OperatorKind.SQL_CALC)
class Calc(_BatchFunction):
    """Flink's Calc: the projected rows that pass its condition."""

    function_name = "calc"


@register(OperatorKind.SQL_EXPAND)
class Expand(_BatchFunction):
    """Flink's Expand: each row once per projection list."""

    function_name = "expand"


@register(OperatorKind.SQL_CONSTRAINT_ENFORCER)
class ConstraintEnforcer(SqlOperator):
    """The sink's NOT NULL columns (``table.exec.sink.not-null-enforcer``: ERROR, or DROP the row)."""

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        self.not_null = [(i, spec.field_names[i]) for i, t in enumerate(spec.field_types) if not parse_type(t).nullable]
        self.drop = getattr(spec, "options", ()) and dict(spec.options).get("not-null-enforcer") == "DROP"
        self.getters = [itemgetter(index) for index, _ in self.not_null]

    def _check(self, row: Any) -> bool:
        for index, column in self.not_null:
            if row[index] is None:
                if self.drop:
                    return False
                raise JobError(
                    f"Column '{column}' is NOT NULL, however, a null value is being written into it. You can set "
                    "job configuration 'table.exec.sink.not-null-enforcer'='DROP' to suppress this exception and "
                    "drop such records silently."
                )
        return True

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        if self._check(value):
            self.output.collect(value, timestamp)

    def process_batch(self, values: list[Any]) -> None:
        # Most batches have no null where none may be: found in C, they pass whole.
        if any(None in map(getter, values) for getter in self.getters):
            values = [v for v in values if self._check(v)]
        if values:
            self.output.collect_batch(values)
