"""The base of SQL operators: row kinds, generated code compiled, errors naming the operator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmagic.errors import JobError
from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.sql_runtime import Code, UnsupportedSpec
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.sql import functions

__all__ = [
    "DELETE",
    "INSERT",
    "KIND_STRINGS",
    "UPDATE_AFTER",
    "UPDATE_BEFORE",
    "SqlOperator",
    "compile_code",
    "runnable_spec",
]

#: Flink's RowKind byte values, carried as a row's last element.
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
KIND_STRINGS = ("+I", "-U", "+U", "-D")


def compile_code(code: Code, name: str, task: TaskInfo) -> Callable[..., Any]:
    """The function ``name`` that ``code`` defines, compiled with the built-ins' namespace
    (processing time from the task's clock). The source is the planner's own, generated on the
    driver and shipped with the job's plan: never text read from a file, a savepoint or the
    network."""
    namespace = functions.namespace(task.clock.now)
    for index, constant in enumerate(code.constants):
        namespace[f"_k{index}"] = constant
    exec(compile(code.source, f"<flowmagic SQL {name}>", "exec"), namespace)
    return namespace[name]


class SqlOperator(Operator):
    """A SQL operator: its spec (``params.runtime``) at hand."""

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.params = params
        self.spec: Any = runnable_spec(name, params)


def runnable_spec(name: str, params: SqlOperatorParams) -> Any:
    """The spec of operator ``name``; a clear refusal when its expressions cannot run yet."""
    spec = params.runtime
    if isinstance(spec, UnsupportedSpec):
        raise JobError(f"{name}: {spec.reason}")
    return spec
