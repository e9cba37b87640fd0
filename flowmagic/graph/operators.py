"""Operator specifications: what a stream node does, as plain data.

The graphs only need an operator's chaining strategy and names; the runtime needs its kind
and the user's functions. :class:`OperatorSpec` carries both without knowing how it runs:
``kind`` (an :class:`OperatorKind`) selects the runtime implementation (one registry entry
per kind) and ``params`` holds the user functions and settings. The kinds are the contract
between the API, which creates them, and the runtime, which implements them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ChainingStrategy", "DriverSide", "OperatorKind", "OperatorSpec"]


class ChainingStrategy(enum.StrEnum):
    """Flink's ``ChainingStrategy``: may an operator join its predecessor's chain."""

    ALWAYS = "ALWAYS"
    NEVER = "NEVER"
    HEAD = "HEAD"
    HEAD_WITH_SOURCES = "HEAD_WITH_SOURCES"

    def __str__(self) -> str:
        return self.value


class OperatorKind(enum.StrEnum):
    """Every kind of operator and source the API creates and the runtime runs."""

    SOURCE_COLLECTION = "source.collection"
    SOURCE_SEQUENCE = "source.sequence"
    SOURCE_DATAGEN = "source.datagen"
    SOURCE_FILE_MONITOR = "source.file_monitor"
    SOURCE_SOCKET = "source.socket"
    SOURCE_SPARK = "source.spark"
    SOURCE_FILE = "source.file"
    FILE_SPLIT_READER = "file_split_reader"
    MAP = "map"
    FLAT_MAP = "flat_map"
    FILTER = "filter"
    PROCESS = "process"
    KEYED_PROCESS = "keyed_process"
    KEYED_REDUCE = "keyed_reduce"
    KEYED_AGGREGATION = "keyed_aggregation"
    TIMESTAMPS_WATERMARKS = "timestamps_watermarks"
    WINDOW = "window"
    CO_MAP = "co_map"
    CO_FLAT_MAP = "co_flat_map"
    CO_PROCESS = "co_process"
    CO_KEYED_PROCESS = "co_keyed_process"
    INTERVAL_JOIN = "interval_join"
    CO_BROADCAST_PROCESS = "co_broadcast_process"
    CO_BROADCAST_KEYED_PROCESS = "co_broadcast_keyed_process"
    PRINT = "print"
    COLLECT = "collect"
    SINK_FUNCTION = "sink_function"
    SINK_WRITER = "sink_writer"
    SINK_COMMITTER = "sink_committer"
    CACHE_WRITE = "cache_write"
    # Flink SQL's operators, one per ExecNode kind the planner translates (their run-time
    # behaviour comes with SQL part 2).
    SQL_TABLE_SOURCE_SCAN = "sql.table_source_scan"
    SQL_VALUES = "sql.values"
    SQL_CALC = "sql.calc"
    SQL_EXPAND = "sql.expand"
    SQL_WATERMARK_ASSIGNER = "sql.watermark_assigner"
    SQL_GROUP_AGGREGATE = "sql.group_aggregate"
    SQL_LOCAL_WINDOW_AGGREGATE = "sql.local_window_aggregate"
    SQL_GLOBAL_WINDOW_AGGREGATE = "sql.global_window_aggregate"
    SQL_WINDOW_AGGREGATE = "sql.window_aggregate"
    SQL_WINDOW_TABLE_FUNCTION = "sql.window_table_function"
    SQL_JOIN = "sql.join"
    SQL_INTERVAL_JOIN = "sql.interval_join"
    SQL_NESTED_LOOP_JOIN = "sql.nested_loop_join"
    SQL_RANK = "sql.rank"
    SQL_DEDUPLICATE = "sql.deduplicate"
    SQL_OVER_AGGREGATE = "sql.over_aggregate"
    SQL_SORT_LIMIT = "sql.sort_limit"
    SQL_SORT = "sql.sort"
    SQL_HASH_AGGREGATE = "sql.hash_aggregate"
    SQL_SORT_AGGREGATE = "sql.sort_aggregate"
    SQL_CONSTRAINT_ENFORCER = "sql.constraint_enforcer"
    SQL_SINK = "sql.sink"
    SQL_COLLECT_SINK = "sql.collect_sink"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, eq=False)
class OperatorSpec:
    """A runtime operator: its ``kind`` and parameters, fixed once the API made it."""

    kind: OperatorKind
    params: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # A misspelt kind fails here, where the program is written, not on an executor.
        object.__setattr__(self, "kind", OperatorKind(self.kind))

    def __getitem__(self, name: str) -> Any:
        return self.params[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.params.get(name, default)


class DriverSide:
    """A parameter only the driver uses (a Spark DataFrame, say): it pickles as empty, so the
    plans shipped to executors leave it behind."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __reduce__(self) -> tuple[Any, ...]:
        return (DriverSide, (None,))

    def __repr__(self) -> str:
        return f"DriverSide({type(self.value).__name__})"
