"""The ``sql.*`` kinds no module implements yet: a job holding one fails at once, in one line
naming the operator (registered by :mod:`flowmagic.runtime.catalog` after every implementing module)."""

from __future__ import annotations

from typing import Any

from flowmagic.errors import JobError
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.registry import implemented, register

__all__ = ["NotYetRunnable", "register_the_rest"]


class NotYetRunnable:
    """A SQL operator or source whose kind flowmagic does not run yet: refuses to start."""

    emits_results = False
    combinable = False

    def __init__(self, *args: Any) -> None:
        name = args[0] if len(args) == 3 else "a SQL source"
        raise JobError(f"flowmagic cannot run this Flink SQL operator yet: {name}.")


def register_the_rest() -> None:
    """Register :class:`NotYetRunnable` for every ``sql.*`` kind no class implements (called
    once every implementing module was imported)."""
    missing = [kind for kind in OperatorKind if kind.value.startswith("sql.") and not implemented(kind)]
    register(*missing)(NotYetRunnable)
