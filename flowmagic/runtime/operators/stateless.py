"""Stateless one-input operators: map, flat map and filter, record by record or a batch at once."""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import FunctionParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.operators.context import adapt
from flowmagic.runtime.operators.operator import Operator, TaskInfo, UserFunctionError
from flowmagic.runtime.registry import register

__all__ = ["FilterOperator", "FlatMapOperator", "FunctionOperator", "MapOperator"]


class FunctionOperator(Operator):
    """An operator of one user function, called through its ``method`` (or as a callable)."""

    method = ""

    def __init__(self, name: str, params: FunctionParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.user_function = params.function
        self.user_functions = (self.user_function,)
        self.function = adapt(self.user_function, self.method)


@register(OperatorKind.MAP)
class MapOperator(FunctionOperator):
    """``function(value)`` per record. Flat map and filter differ only in :meth:`apply` and
    :meth:`apply_all`: what one record, and what a batch of records, turns into."""

    method = "map"

    def apply(self, value: Any) -> list[Any]:
        return [self.function(value)]

    def apply_all(self, values: list[Any]) -> list[Any]:
        function = self.function
        return [function(value) for value in values]

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            results = self.apply(value)
        except Exception as error:
            raise self.fail(error, value) from error
        collect = self.output.collect
        for result in results:
            collect(result, timestamp)

    def process_batch(self, values: list[Any]) -> None:
        try:
            results = self.apply_all(values)
        except Exception as error:
            raise self._locate(error, values) from error
        self.output.collect_batch(results)

    def _locate(self, error: Exception, values: list[Any]) -> UserFunctionError:
        # The batch lost which record failed; find it again for the message.
        for value in values:
            try:
                self.apply(value)
            except Exception:
                return self.fail(error, value)
        return self.fail(error, has_record=False)


@register(OperatorKind.FLAT_MAP)
class FlatMapOperator(MapOperator):
    method = "flat_map"

    def apply(self, value: Any) -> list[Any]:
        return list(self.function(value) or ())

    def apply_all(self, values: list[Any]) -> list[Any]:
        function = self.function
        return [result for value in values for result in function(value) or ()]


@register(OperatorKind.FILTER)
class FilterOperator(MapOperator):
    method = "filter"

    def apply(self, value: Any) -> list[Any]:
        return [value] if self.function(value) else []

    def apply_all(self, values: list[Any]) -> list[Any]:
        function = self.function
        return [value for value in values if function(value)]
