"""Partitioners: how records of a stream edge are distributed over the consumer's subtasks.

Each partitioner prints as Flink's ``toString()`` (``FORWARD``, ``HASH`` ...), which is
what every plan, JSON export and drawing shows as the ship strategy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BROADCAST",
    "CUSTOM",
    "FORWARD",
    "GLOBAL",
    "HASH",
    "REBALANCE",
    "RESCALE",
    "SHUFFLE",
    "Partitioner",
]

FORWARD = "FORWARD"
RESCALE = "RESCALE"
REBALANCE = "REBALANCE"
HASH = "HASH"
BROADCAST = "BROADCAST"
GLOBAL = "GLOBAL"
SHUFFLE = "SHUFFLE"
CUSTOM = "CUSTOM"

_POINTWISE = frozenset({FORWARD, RESCALE})


@dataclass(frozen=True, eq=False)
class Partitioner:
    """A stream partitioner.

    ``kind`` is the ship strategy name. ``key_selector`` is set for ``HASH`` (the ``key_by``
    function), ``function`` for ``CUSTOM`` (the user's ``partition(key, num_partitions)``).
    ``unspecified`` marks a FORWARD that Flink chose itself because no partitioner was given
    in a dynamic (BATCH) graph: Flink's ``ForwardForUnspecifiedPartitioner``. ``call_site``
    is the user's ``file:line`` of the ``key_by`` or ``partition_custom``, which a failing
    key selector or partitioner is reported at. ``pyflink_key_type`` is set for a ``key_by`` of
    PyFlink's API: the key type it declared (``Types.PICKLED_BYTE_ARRAY()`` when none), by
    which PyFlink converts its keys before routing them.
    """

    kind: str
    key_selector: Callable[[Any], Any] | None = field(default=None, repr=False)
    function: Callable[..., int] | None = field(default=None, repr=False)
    unspecified: bool = False
    call_site: str | None = field(default=None, repr=False)
    pyflink_key_type: Any = field(default=None, repr=False)
    #: Set on a FORWARD that is Flink's ForwardForConsecutiveHashPartitioner (a batch SQL
    #: exchange keeping a hash made further down): chainable whatever its exchange mode, and
    #: this hash partitioner on the JobEdge where it is not chained.
    consecutive_hash: Partitioner | None = field(default=None, repr=False)

    @property
    def is_pointwise(self) -> bool:
        """Whether the JobEdge of this partitioner is POINTWISE (else ALL_TO_ALL)."""
        return self.kind in _POINTWISE

    @property
    def is_forward(self) -> bool:
        return self.kind == FORWARD

    def __str__(self) -> str:
        return self.kind
