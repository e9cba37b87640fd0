"""Operator specifications: what a stream node does, as plain data.

The graphs only need an operator's chaining strategy and names; the runtime needs its kind
and the user's functions. :class:`OperatorSpec` carries both without knowing how it runs:
``kind`` (an :class:`OperatorKind`) selects the runtime implementation (one registry entry
per kind) and ``params`` holds the user functions and settings, in the dataclass
:data:`PARAMETERS` gives for the kind. The kinds and their parameters are the contract
between the API, which creates them, and the runtime, which implements them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from flowmagic.graph import operator_params as op

__all__ = ["CONNECTOR_KIND_PREFIX", "PARAMETERS", "ChainingStrategy", "DriverSide", "OperatorKind", "OperatorSpec"]

#: The prefix of the operator kinds of connectors defined outside flowmagic.
CONNECTOR_KIND_PREFIX = "connector."


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
    BLACKHOLE = "blackhole"
    SINK_FUNCTION = "sink_function"
    SINK_WRITER = "sink_writer"
    SINK_COMMITTER = "sink_committer"
    CACHE_WRITE = "cache_write"
    # Flink SQL's operators, one per ExecNode kind the planner translates (their run-time
    # behaviour comes with SQL part 2).
    SQL_TABLE_SOURCE_SCAN = "sql.table_source_scan"
    SQL_INPUT_CONVERSION = "sql.input_conversion"
    SQL_DROP_UPDATE_BEFORE = "sql.drop_update_before"
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
    SQL_HASH_JOIN = "sql.hash_join"
    SQL_ADAPTIVE_JOIN = "sql.adaptive_join"
    SQL_MULTIPLE_INPUT = "sql.multiple_input"
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


#: The parameters of each kind of operator (a connector defined outside flowmagic enters its
#: ``connector.<identifier>`` kind's when its module is imported).
PARAMETERS: dict[OperatorKind | str, type[op.OperatorParams]] = {
    OperatorKind.SOURCE_COLLECTION: op.CollectionSourceParams,
    OperatorKind.SOURCE_SEQUENCE: op.SequenceSourceParams,
    OperatorKind.SOURCE_DATAGEN: op.DatagenSourceParams,
    OperatorKind.SOURCE_FILE_MONITOR: op.FileMonitorSourceParams,
    OperatorKind.SOURCE_SOCKET: op.SocketSourceParams,
    OperatorKind.SOURCE_SPARK: op.SparkSourceParams,
    OperatorKind.SOURCE_FILE: op.FileSourceParams,
    OperatorKind.FILE_SPLIT_READER: op.FileSplitReaderParams,
    OperatorKind.MAP: op.FunctionParams,
    OperatorKind.FLAT_MAP: op.FunctionParams,
    OperatorKind.FILTER: op.FunctionParams,
    OperatorKind.PROCESS: op.ProcessParams,
    OperatorKind.KEYED_PROCESS: op.ProcessParams,
    OperatorKind.KEYED_REDUCE: op.KeyedReduceParams,
    OperatorKind.KEYED_AGGREGATION: op.KeyedAggregationParams,
    OperatorKind.TIMESTAMPS_WATERMARKS: op.TimestampsWatermarksParams,
    OperatorKind.WINDOW: op.WindowParams,
    OperatorKind.CO_MAP: op.CoFunctionParams,
    OperatorKind.CO_FLAT_MAP: op.CoFunctionParams,
    OperatorKind.CO_PROCESS: op.CoProcessParams,
    OperatorKind.CO_KEYED_PROCESS: op.CoProcessParams,
    OperatorKind.INTERVAL_JOIN: op.IntervalJoinParams,
    OperatorKind.CO_BROADCAST_PROCESS: op.BroadcastProcessParams,
    OperatorKind.CO_BROADCAST_KEYED_PROCESS: op.BroadcastProcessParams,
    OperatorKind.PRINT: op.PrintParams,
    OperatorKind.COLLECT: op.OperatorParams,
    OperatorKind.BLACKHOLE: op.OperatorParams,
    OperatorKind.SINK_FUNCTION: op.FunctionParams,
    OperatorKind.SINK_WRITER: op.SinkParams,
    OperatorKind.SINK_COMMITTER: op.SinkParams,
    OperatorKind.CACHE_WRITE: op.OperatorParams,
    OperatorKind.SQL_TABLE_SOURCE_SCAN: op.SqlOperatorParams,
    OperatorKind.SQL_INPUT_CONVERSION: op.SqlOperatorParams,
    OperatorKind.SQL_DROP_UPDATE_BEFORE: op.SqlOperatorParams,
    OperatorKind.SQL_VALUES: op.SqlOperatorParams,
    OperatorKind.SQL_CALC: op.SqlOperatorParams,
    OperatorKind.SQL_EXPAND: op.SqlOperatorParams,
    OperatorKind.SQL_WATERMARK_ASSIGNER: op.SqlOperatorParams,
    OperatorKind.SQL_GROUP_AGGREGATE: op.SqlOperatorParams,
    OperatorKind.SQL_LOCAL_WINDOW_AGGREGATE: op.SqlOperatorParams,
    OperatorKind.SQL_GLOBAL_WINDOW_AGGREGATE: op.SqlOperatorParams,
    OperatorKind.SQL_WINDOW_AGGREGATE: op.SqlOperatorParams,
    OperatorKind.SQL_WINDOW_TABLE_FUNCTION: op.SqlOperatorParams,
    OperatorKind.SQL_JOIN: op.SqlOperatorParams,
    OperatorKind.SQL_INTERVAL_JOIN: op.SqlOperatorParams,
    OperatorKind.SQL_NESTED_LOOP_JOIN: op.SqlOperatorParams,
    OperatorKind.SQL_HASH_JOIN: op.SqlOperatorParams,
    OperatorKind.SQL_ADAPTIVE_JOIN: op.SqlOperatorParams,
    OperatorKind.SQL_MULTIPLE_INPUT: op.SqlOperatorParams,
    OperatorKind.SQL_RANK: op.SqlOperatorParams,
    OperatorKind.SQL_DEDUPLICATE: op.SqlOperatorParams,
    OperatorKind.SQL_OVER_AGGREGATE: op.SqlOperatorParams,
    OperatorKind.SQL_SORT_LIMIT: op.SqlOperatorParams,
    OperatorKind.SQL_SORT: op.SqlOperatorParams,
    OperatorKind.SQL_HASH_AGGREGATE: op.SqlOperatorParams,
    OperatorKind.SQL_SORT_AGGREGATE: op.SqlOperatorParams,
    OperatorKind.SQL_CONSTRAINT_ENFORCER: op.SqlOperatorParams,
    OperatorKind.SQL_SINK: op.SqlOperatorParams,
    OperatorKind.SQL_COLLECT_SINK: op.SqlOperatorParams,
}


@dataclass(frozen=True, eq=False)
class OperatorSpec:
    """A runtime operator: its ``kind`` and parameters, fixed once the API made it."""

    #: One of flowmagic's kinds, or ``connector.<identifier>``: the kind of a connector
    #: defined outside flowmagic (see :mod:`flowmagic.runtime.connectors.factories`), whose module
    #: enters its parameters' class in :data:`PARAMETERS`.
    kind: OperatorKind | str
    params: op.OperatorParams = field(default_factory=op.OperatorParams, repr=False)

    def __post_init__(self) -> None:
        # A misspelt kind, or parameters of another kind, fail here, where the program is
        # written, not on an executor.
        kind: OperatorKind | str = self.kind
        if not (isinstance(kind, str) and kind.startswith(CONNECTOR_KIND_PREFIX)):
            kind = OperatorKind(kind)
            object.__setattr__(self, "kind", kind)
        expected = PARAMETERS.get(kind)
        if expected is None:
            raise TypeError(f"operator kind {kind} has no parameters' class in PARAMETERS")
        if type(self.params) is not expected:
            raise TypeError(f"operator kind {kind} takes {expected.__name__}, not {type(self.params).__name__}")


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
