"""Flink SQL's operator kinds at run time: they run with flowmagic's SQL part 2. Until then a
job holding one fails at once, in one line, naming the operator."""

from __future__ import annotations

from typing import Any

from flowmagic.errors import JobError
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.registry import register

__all__ = ["SqlOperator"]

RUN_LATER = "Running Flink SQL operators comes with flowmagic's SQL part 2; today flowmagic plans and explains them"


@register(*(kind for kind in OperatorKind if kind.value.startswith("sql.")))
class SqlOperator:
    """A SQL operator or source (``sql.*`` kinds): refuses to start."""

    emits_results = False
    combinable = False

    def __init__(self, *args: Any) -> None:
        name = args[0] if len(args) == 3 else "a SQL source"
        raise JobError(f"{RUN_LATER} ({name}).")
