"""BATCH ``cache()``'s ``CacheWrite`` vertex."""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.operators.operator import Operator
from flowmagic.runtime.registry import register

__all__ = ["CacheWrite"]


@register(OperatorKind.CACHE_WRITE)
class CacheWrite(Operator):
    """Where Flink keeps a cached stream's result for later jobs of its environment.
    flowmagic keeps no result between jobs (each job computes a cached stream again, as
    PyFlink 2.3's local executor does), so the records end here."""

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        """The record is not kept."""

    def process_batch(self, values: list[Any]) -> None:
        """The records are not kept."""
