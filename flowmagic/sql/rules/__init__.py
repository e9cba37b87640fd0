"""The optimizer's rewrite rules, one per module, applied in Flink's phase order by
``flowmagic.sql.optimize`` (a fixed pipeline: these shapes need no cost-based search)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

N = TypeVar("N")


def bottom_up(node: N, rewrite: Callable[[N], N]) -> N:
    """``rewrite`` applied to every node, inputs first."""
    inputs = [bottom_up(i, rewrite) for i in node.inputs]  # type: ignore[attr-defined]
    return rewrite(replace(node, inputs=inputs))  # type: ignore[type-var]
