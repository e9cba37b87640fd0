"""Two-input operators of connected streams: co-map, co-flat-map and co-process."""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import CoFunctionParams, CoProcessParams, ProcessParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.operators.context import emit_all, with_collector
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.operators.process import ProcessOperator
from flowmagic.runtime.registry import register

__all__ = ["CoFlatMapOperator", "CoMapOperator", "CoProcessOperator"]


def owners(*functions: Any) -> tuple[Any, ...]:
    """The user objects behind two-input functions: a ``CoMapFunction``'s ``map1``/``map2`` are
    bound methods of one object, which is opened and closed once; plain callables have none."""
    found: list[Any] = []
    for function in functions:
        owner = getattr(function, "__self__", None)
        if owner is not None and not any(owner is seen for seen in found):
            found.append(owner)
    return tuple(found)


class _TwoInputOperator(Operator):
    """Two-input operators: one function per input side (1 and 2)."""

    def __init__(self, name: str, params: CoFunctionParams, task: TaskInfo):
        super().__init__(name, params, task)
        first, second = params.functions
        # Indexed by input side, 1 and 2.
        self.functions: tuple[Any, ...] = (None, first, second)
        self.user_functions = owners(first, second)


@register(OperatorKind.CO_MAP)
class CoMapOperator(_TwoInputOperator):
    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            result = self.functions[side](value)
        except Exception as error:
            raise self.fail(error, value) from error
        self.output.collect(result, timestamp)


@register(OperatorKind.CO_FLAT_MAP)
class CoFlatMapOperator(_TwoInputOperator):
    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        collect = self.output.collect
        try:
            for result in self.functions[side](value) or ():
                collect(result, timestamp)
        except Exception as error:
            raise self.fail(error, value) from error


@register(OperatorKind.CO_PROCESS, OperatorKind.CO_KEYED_PROCESS)
class CoProcessOperator(ProcessOperator):
    """``process_element1/2(value, ctx)`` or ``(value, ctx, out)``; keyed (state and timers)
    when both inputs are keyed."""

    keyed_timers = True

    def __init__(self, name: str, params: CoProcessParams, task: TaskInfo):
        first, second = params.functions
        key_selectors = params.key_selectors
        # The process operator of the first input, keyed by its key when both inputs are keyed.
        first_input = ProcessParams(function=first, key_selector=key_selectors[0] if key_selectors else None)
        super().__init__(name, first_input, task)
        self.functions: tuple[Any, ...] = (None, with_collector(first, 2), with_collector(second, 2))
        self.user_functions = owners(first, second)
        self.key_selectors: tuple[Any, ...] = key_selectors or (None, None)
        owner = getattr(first, "__self__", None)
        self.on_timer = self._timer_function(getattr(owner, "on_timer", None) if owner is not None else None)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        context = self.context
        context.current_timestamp = timestamp
        try:
            selector = self.key_selectors[side - 1]
            if selector is not None:
                self.keyed_state.current_key = selector(value)
            emit_all(self.functions[side](value, context, self.out), self.out.collect)
        except Exception as error:
            raise self.fail(error, value) from error
