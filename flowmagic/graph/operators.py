"""Operator specifications: what a stream node does, as plain data.

The graphs only need an operator's chaining strategy and names; the runtime needs its kind
and the user's functions. :class:`OperatorSpec` carries both without knowing how it runs:
``kind`` selects the runtime implementation (one registry entry per kind) and ``params``
holds the user functions and settings.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ChainingStrategy", "OperatorSpec"]


class ChainingStrategy(enum.StrEnum):
    """Flink's ``ChainingStrategy``: may an operator join its predecessor's chain."""

    ALWAYS = "ALWAYS"
    NEVER = "NEVER"
    HEAD = "HEAD"
    HEAD_WITH_SOURCES = "HEAD_WITH_SOURCES"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, eq=False)
class OperatorSpec:
    """A runtime operator: its ``kind`` (e.g. ``"map"``, ``"keyed_reduce"``) and parameters."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict, repr=False)

    def __getitem__(self, name: str) -> Any:
        return self.params[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.params.get(name, default)
