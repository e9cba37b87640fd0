"""What the windowing, join, ranking and sorting SQL operators run: plain-data specs the
planner fills per ExecNode (:mod:`flowmagic.sql.runtime_spec_ops`), next to the specs of
:mod:`flowmagic.graph.sql_runtime` and under the same rules (generated code as
:class:`~flowmagic.graph.sql_runtime.Code`, types as Flink type strings, everything picklable).
Times and durations are milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flowmagic.graph.sql_runtime import AggCallSpec, Code, SqlRuntimeSpec

__all__ = [
    "BatchJoinSpec",
    "BatchRankSpec",
    "DeduplicateSpec",
    "IntervalJoinSpec",
    "JoinSpec",
    "MemberSpec",
    "MultipleInputSpec",
    "OverAggregateSpec",
    "RankSpec",
    "SortLimitSpec",
    "WindowAggregateSpec",
    "WindowSpec",
    "WindowTableFunctionSpec",
]


@dataclass(frozen=True)
class WindowSpec:
    """A window TVF: ``TUMBLE`` (size), ``HOP`` (size, slide), ``CUMULATE`` (max size, step)
    or ``SESSION`` (gap), over the time field ``time_field`` of the operator's input."""

    kind: str
    size: int = 0
    step: int = 0
    gap: int = 0
    time_field: int = 0
    #: The time zone windows align in (Flink's shift time zone): the session's for a
    #: TIMESTAMP_LTZ time attribute, else UTC.
    zone: str = "UTC"


@dataclass(frozen=True, kw_only=True)
class WindowTableFunctionSpec(SqlRuntimeSpec):
    """Batch ``WindowTableFunction``: every input row once per window holding its time, with
    ``window_start``, ``window_end`` and ``window_time`` appended."""

    window: WindowSpec


@dataclass(frozen=True, kw_only=True)
class WindowAggregateSpec(SqlRuntimeSpec):
    """A window aggregate. ``phase``: ``local`` (accumulators per key and slice, then the
    slice's end), ``global`` (merging them; input: keys, accumulators, slice end) or ``single``
    (one phase: session windows). ``properties``: the window columns after the aggregates
    (``window_start``, ``window_end``, ``window_time``)."""

    window: WindowSpec
    grouping: tuple[int, ...]
    #: The fields the input is keyed by (the global and one-phase aggregates'), and their types.
    key_fields: tuple[int, ...]
    key_types: tuple[str, ...]
    calls: tuple[AggCallSpec, ...]
    phase: str
    properties: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class JoinSpec(SqlRuntimeSpec):
    """The streaming regular join (``StreamingJoinOperator``): its type (``inner``, ``left``,
    ``right``, ``full``), the key fields of each input and their types, the widths of the inputs and the
    ``condition(r) -> bool | None`` over the joined row (the equality of the keys included)."""

    join_type: str
    key_fields: tuple[tuple[int, ...], tuple[int, ...]]
    key_types: tuple[tuple[str, ...], tuple[str, ...]]
    widths: tuple[int, int]
    condition: Code
    state_ttl_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class IntervalJoinSpec(JoinSpec):
    """The interval join (``RowTimeIntervalJoin``, ``ProcTimeIntervalJoin``): a left row at
    time ``l`` joins right rows at times ``r`` with ``lower <= l - r <= upper``; the times are
    fields ``left_time`` and ``right_time`` of the inputs (event time), or when the rows
    arrived (processing time, ``rowtime`` False)."""

    lower: int
    upper: int
    left_time: int
    right_time: int
    rowtime: bool = True


@dataclass(frozen=True, kw_only=True)
class RankSpec(SqlRuntimeSpec):
    """Streaming Top-N: the processing strategy Flink picked (``AppendFastStrategy``,
    ``RetractStrategy``, ``UpdateFastStrategy``), sort keys, the rank range and
    whether the row number is the last output field."""

    strategy: str
    #: The partition keys (the fields the input is keyed by) and their types.
    key_fields: tuple[int, ...]
    key_types: tuple[str, ...]
    #: Sort keys: ``(field, descending, nulls last)``.
    order: tuple[tuple[int, bool, bool], ...]
    rank_start: int
    rank_end: int
    output_rank: bool
    state_ttl_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class DeduplicateSpec(SqlRuntimeSpec):
    """Streaming deduplication: keep the first or the last row of each key, by processing
    time or by the rowtime field ``rowtime``."""

    keep_last: bool
    rowtime: int | None
    key_fields: tuple[int, ...]
    key_types: tuple[str, ...]
    #: Whether -U rows are sent (Flink's ``generateUpdateBefore``).
    update_before: bool = True
    state_ttl_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class SortLimitSpec(SqlRuntimeSpec):
    """Batch ``SortLimit``: the sorted rows (keys ``(field, descending, nulls last)``) from
    ``offset``, at most ``fetch`` of them (the local phase keeps the first ``offset + fetch``)."""

    order: tuple[tuple[int, bool, bool], ...]
    offset: int = 0
    fetch: int = 0


@dataclass(frozen=True, kw_only=True)
class BatchRankSpec(SqlRuntimeSpec):
    """Batch ``Rank`` over input sorted by partition and order keys: RANK, DENSE_RANK or
    ROW_NUMBER; the local phase keeps the rows of rank at most ``rank_end``, the global one
    those in range and appends the rank when the output has it."""

    function: str
    partition: tuple[int, ...]
    order: tuple[int, ...]
    rank_start: int
    rank_end: int
    output_rank: bool


@dataclass(frozen=True, kw_only=True)
class OverAggregateSpec(SqlRuntimeSpec):
    """Batch ``OverAggregate`` over input sorted by partition and order keys, each call
    (ROW_NUMBER, RANK, DENSE_RANK) over ``ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW``."""

    partition: tuple[int, ...]
    order: tuple[int, ...]
    calls: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class BatchJoinSpec(SqlRuntimeSpec):
    """A batch join (``NestedLoopJoin``, ``HashJoin``, ``AdaptiveJoin``): its type, the widths
    of its inputs, which input is built (``left``/``right``), the key fields of each input (none
    for a nested loop) and ``condition(r) -> bool | None`` over the joined row."""

    join_type: str
    widths: tuple[int, int]
    build: str
    keys: tuple[tuple[int, ...], tuple[int, ...]]
    condition: Code


@dataclass(frozen=True)
class MemberSpec:
    """One operator inside a MultipleInput: its kind and spec, and where each of its inputs
    comes from (``("input", i)``: the MultipleInput's input ``i``; ``("member", j)``: member
    ``j``'s output)."""

    kind: str
    spec: Any
    inputs: tuple[tuple[str, int], ...]
    name: str = ""


@dataclass(frozen=True, kw_only=True)
class MultipleInputSpec(SqlRuntimeSpec):
    """Batch ``MultipleInput``: its members, inputs before consumers, the root's last; ``read_order``:
    the order in which its inputs are read to their end (build sides first)."""

    members: tuple[MemberSpec, ...]
    read_order: tuple[int, ...] = field(default=())
