"""The parameters of Flink SQL's operators: what the planner fixes and the runtime will read.

One frozen dataclass for every SQL operator kind (the ExecNode it came from says what it
does), after the pattern of the DataStream kinds' parameters. None of this reaches a graph's
JSON or an operator's hash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SqlOperatorParams"]


@dataclass(frozen=True, eq=False, kw_only=True)
class SqlOperatorParams:
    """A SQL operator: its ExecNode's id, type (``stream-exec-calc_1``) and description, the
    names of its output fields, and the planner's node (the expressions and keys to run)."""

    exec_node_id: int
    exec_type: str
    description: str
    field_names: tuple[str, ...]
    #: The physical plan node (``flowmagic.sql.physical``), None for the operators a sink adds.
    physical: Any = None
    #: Key field indexes of a keyed input (hash exchange), one tuple per input.
    keys: tuple[tuple[int, ...], ...] = ()
