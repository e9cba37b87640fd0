"""What a SQL operator runs: the plain-data runtime spec the planner fills per ExecNode.

As Flink's planner generates code for flink-table-runtime, flowmagic's planner
(:mod:`flowmagic.sql.codegen`) turns each ExecNode into one of these specs, carried in
:class:`~flowmagic.graph.operator_params.SqlOperatorParams` ``runtime``: expressions as Python
source it generated itself (never read from a file, a savepoint or the network), compiled by
the runtime (:mod:`flowmagic.runtime.sql`) with its namespace of Flink-semantics built-in
functions; types as Flink's type strings (``INT NOT NULL``, ``DECIMAL(5, 2)``, ``STRING``).
Everything here pickles, so that a graph ships to Spark's workers as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AggCallSpec",
    "AggregateSpec",
    "CalcSpec",
    "Code",
    "ExpandSpec",
    "InputConversionSpec",
    "ScanSpec",
    "SinkSpec",
    "SortSpec",
    "SqlRuntimeSpec",
    "UnsupportedSpec",
    "ValuesSpec",
    "WatermarkSpec",
]


@dataclass(frozen=True)
class Code:
    """Generated Python source defining one function (named in the spec that holds it), and
    the constants it reads as ``_k0``, ``_k1``... (decimals, compiled patterns' texts)."""

    source: str
    constants: tuple[Any, ...] = ()


@dataclass(frozen=True, kw_only=True)
class SqlRuntimeSpec:
    """What every SQL operator knows: its output fields' names and Flink types."""

    field_names: tuple[str, ...]
    field_types: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class UnsupportedSpec(SqlRuntimeSpec):
    """An operator whose expressions the runtime cannot run yet: it refuses to start, saying why
    (planning and EXPLAIN still work)."""

    reason: str


@dataclass(frozen=True, kw_only=True)
class ValuesSpec(SqlRuntimeSpec):
    """``VALUES``: its rows, evaluated by the planner (literals and constant expressions)."""

    rows: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True, kw_only=True)
class ScanSpec(SqlRuntimeSpec):
    """A table's source: its connector and options, its physical columns ``(name, Flink
    type)``, and which of them the scan emits (a pushed-down projection)."""

    table: str
    options: tuple[tuple[str, str], ...]
    columns: tuple[tuple[str, str], ...]
    projection: tuple[int, ...]
    #: A filter pushed into the source: ``filter(row) -> bool | None`` over the emitted fields.
    filter: Code | None = None


@dataclass(frozen=True, kw_only=True)
class InputConversionSpec(SqlRuntimeSpec):
    """Flink's InputConversionOperator of a DataStream read as a table: each record into a row.
    ``record`` says what a record is (``atomic``: the row's one field; ``tuple`` or ``row``: the
    fields at ``positions``); ``rowtime`` appends the record's timestamp (a ``rowtime``
    metadata column); ``propagate_watermark`` passes the stream's watermarks on
    (``SOURCE_WATERMARK()``; otherwise only the final one)."""

    record: str
    positions: tuple[int, ...]
    rowtime: bool
    propagate_watermark: bool
    #: False for a changelog stream: its Rows keep their kinds.
    insert_only: bool = True


@dataclass(frozen=True, kw_only=True)
class CalcSpec(SqlRuntimeSpec):
    """A projection with an optional filter: ``calc(rows) -> list`` over a batch of rows."""

    code: Code


@dataclass(frozen=True, kw_only=True)
class ExpandSpec(SqlRuntimeSpec):
    """Every input row once per projection list: ``expand(rows) -> list``."""

    code: Code


@dataclass(frozen=True, kw_only=True)
class WatermarkSpec(SqlRuntimeSpec):
    """A watermark assigner: the rowtime field and ``watermark(row) -> int | None`` (ms)."""

    rowtime: int
    code: Code


@dataclass(frozen=True)
class AggCallSpec:
    """One aggregate call: Calcite's function name (``COUNT``, ``SUM``, ``$SUM0``, ``MIN``,
    ``MAX``, ``AVG``), its argument fields, DISTINCT, the boolean filter field, and the Flink
    types of its result and of its first argument."""

    function: str
    args: tuple[int, ...]
    distinct: bool
    filter: int | None
    result_type: str
    arg_type: str | None


@dataclass(frozen=True, kw_only=True)
class AggregateSpec(SqlRuntimeSpec):
    """A group aggregate. ``phase``: ``single`` (all of it: the streaming GroupAggregate, a
    batch one-phase aggregate), ``local`` (batch: accumulators per key of a subtask's input)
    or ``global`` (batch: merging the local accumulators, whose fields follow the keys)."""

    grouping: tuple[int, ...]
    calls: tuple[AggCallSpec, ...]
    phase: str = "single"
    #: Whether the input retracts (-U, -D): MIN and MAX then keep every value's count.
    retracting_input: bool = False
    #: Streaming: ``table.exec.state.ttl`` in ms (0: kept for ever).
    state_ttl_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class SinkSpec(SqlRuntimeSpec):
    """Where a statement's rows go: ``collect`` (a SELECT's result), or a table's connector
    (``print``, ``blackhole``, ``filesystem``) with its options."""

    connector: str
    table: str = ""
    options: tuple[tuple[str, str], ...] = field(default=())
    #: Streaming (rows with their kinds) or batch.
    streaming: bool = True
    #: ``table.local-time-zone``: how TIMESTAMP_LTZ values are written.
    time_zone: str = "UTC"


@dataclass(frozen=True, kw_only=True)
class SortSpec(SqlRuntimeSpec):
    """A batch Sort of a subtask's input: ``(field, descending, nulls last)`` per key."""

    keys: tuple[tuple[int, bool, bool], ...]
