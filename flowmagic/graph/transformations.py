"""Transformations: the program a DataStream API call sequence builds, as plain data.

Mirrors Flink's ``org.apache.flink.api.dag.Transformation`` family. Every transformation
takes an id from its environment's counter when the API call creates it, including the
ones that never become a StreamNode (key_by, union, side outputs): that is how Flink
numbers them and why ids in plans skip numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flowmagic.graph.operators import ChainingStrategy, OperatorSpec
from flowmagic.graph.partitioners import Partitioner

__all__ = [
    "CacheTransformation",
    "LegacySinkTransformation",
    "MultipleInputTransformation",
    "OneInputTransformation",
    "PartitionTransformation",
    "SideOutputTransformation",
    "SinkTransformation",
    "SourceTransformation",
    "Transformation",
    "TwoInputTransformation",
    "UnionTransformation",
]

PARALLELISM_DEFAULT = -1


@dataclass(eq=False)
class Transformation:
    """Base of all transformations. Identity (not value) equality, as in Flink."""

    id: int
    name: str
    parallelism: int
    inputs: list[Transformation] = field(default_factory=list, repr=False)
    parallelism_configured: bool = False
    max_parallelism: int = -1
    uid: str | None = None
    uid_hash: str | None = None
    slot_sharing_group: str | None = None
    description: str | None = None
    #: Where the user's program created it (``file:line``), so graph errors can point there.
    call_site: str | None = field(default=None, repr=False)

    @property
    def kind(self) -> str:
        """Short name of the transformation class, for messages and dumps."""
        return type(self).__name__


@dataclass(eq=False)
class PhysicalTransformation(Transformation):
    """A transformation that becomes a StreamNode running an operator."""

    operator: OperatorSpec | None = field(default=None, repr=False)
    chaining_strategy: ChainingStrategy = ChainingStrategy.ALWAYS
    #: Operators that must run at parallelism 1 (socket source, window_all).
    non_parallel: bool = False


@dataclass(eq=False)
class SourceTransformation(PhysicalTransformation):
    """A source. ``legacy`` marks SourceFunction-style sources (socket, file monitor)."""

    bounded: bool = True
    legacy: bool = False


@dataclass(eq=False)
class OneInputTransformation(PhysicalTransformation):
    """An operator with one input; ``state_key`` is the key selector of a keyed input."""

    state_key: Callable[[Any], Any] | None = field(default=None, repr=False)


@dataclass(eq=False)
class TwoInputTransformation(PhysicalTransformation):
    """A two-input operator (``connect``); each side may be keyed."""

    state_key1: Callable[[Any], Any] | None = field(default=None, repr=False)
    state_key2: Callable[[Any], Any] | None = field(default=None, repr=False)


@dataclass(eq=False)
class MultipleInputTransformation(PhysicalTransformation):
    """An operator of any number of inputs (Flink's batch SQL MultipleInput): input ``i`` is
    read as edge type number ``i + 1``."""


@dataclass(eq=False)
class LegacySinkTransformation(PhysicalTransformation):
    """A SinkFunction-style sink (``print``, ``add_sink``): joins the StreamGraph's sink set.

    ``state_key`` is the key selector when the sink consumes a KeyedStream (Flink's
    ``KeyedStream.addSink`` keeps the key, so the sink reads sorted input in BATCH)."""

    state_key: Callable[[Any], Any] | None = field(default=None, repr=False)


@dataclass(eq=False)
class SinkTransformation(PhysicalTransformation):
    """A Sink V2 (``sink_to``): expanded into writer (and committer) operators when translated.
    ``record_type`` is the input's declared type, which says how records are written."""

    sink: Any = field(default=None, repr=False)
    record_type: Any = field(default=None, repr=False)


@dataclass(eq=False)
class CacheTransformation(PhysicalTransformation):
    """``cache()``: in BATCH, a ``CacheWrite`` node keeps its input's result (a persistent
    blocking partition); consumers of the cached stream read its input directly."""


@dataclass(eq=False)
class UnionTransformation(Transformation):
    """A union: no node of its own, its consumers read all inputs directly."""


@dataclass(eq=False)
class PartitionTransformation(Transformation):
    """A partitioning (key_by, rebalance, ...): a virtual node resolved into edges."""

    partitioner: Partitioner = field(default_factory=lambda: Partitioner("FORWARD"))
    exchange_mode: str | None = None


@dataclass(eq=False)
class SideOutputTransformation(Transformation):
    """The side output ``tag`` of its input: a virtual node resolved into edges."""

    tag: str = ""
