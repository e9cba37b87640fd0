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

from flowmagic.graph import operator_params as p

__all__ = ["PARAMETERS", "ChainingStrategy", "DriverSide", "OperatorKind", "OperatorSpec"]


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

    def __str__(self) -> str:
        return self.value


#: The parameters of each kind of operator.
PARAMETERS: dict[OperatorKind, type[p.OperatorParams]] = {
    OperatorKind.SOURCE_COLLECTION: p.CollectionSourceParams,
    OperatorKind.SOURCE_SEQUENCE: p.SequenceSourceParams,
    OperatorKind.SOURCE_DATAGEN: p.DatagenSourceParams,
    OperatorKind.SOURCE_FILE_MONITOR: p.FileMonitorSourceParams,
    OperatorKind.SOURCE_SOCKET: p.SocketSourceParams,
    OperatorKind.SOURCE_SPARK: p.SparkSourceParams,
    OperatorKind.SOURCE_FILE: p.FileSourceParams,
    OperatorKind.FILE_SPLIT_READER: p.FileSplitReaderParams,
    OperatorKind.MAP: p.FunctionParams,
    OperatorKind.FLAT_MAP: p.FunctionParams,
    OperatorKind.FILTER: p.FunctionParams,
    OperatorKind.PROCESS: p.ProcessParams,
    OperatorKind.KEYED_PROCESS: p.ProcessParams,
    OperatorKind.KEYED_REDUCE: p.KeyedReduceParams,
    OperatorKind.KEYED_AGGREGATION: p.KeyedAggregationParams,
    OperatorKind.TIMESTAMPS_WATERMARKS: p.TimestampsWatermarksParams,
    OperatorKind.WINDOW: p.WindowParams,
    OperatorKind.CO_MAP: p.CoFunctionParams,
    OperatorKind.CO_FLAT_MAP: p.CoFunctionParams,
    OperatorKind.CO_PROCESS: p.CoProcessParams,
    OperatorKind.CO_KEYED_PROCESS: p.CoProcessParams,
    OperatorKind.INTERVAL_JOIN: p.IntervalJoinParams,
    OperatorKind.CO_BROADCAST_PROCESS: p.BroadcastProcessParams,
    OperatorKind.CO_BROADCAST_KEYED_PROCESS: p.BroadcastProcessParams,
    OperatorKind.PRINT: p.PrintParams,
    OperatorKind.COLLECT: p.OperatorParams,
    OperatorKind.SINK_FUNCTION: p.FunctionParams,
    OperatorKind.SINK_WRITER: p.SinkParams,
    OperatorKind.SINK_COMMITTER: p.SinkParams,
    OperatorKind.CACHE_WRITE: p.OperatorParams,
}


@dataclass(frozen=True, eq=False)
class OperatorSpec:
    """A runtime operator: its ``kind`` and parameters, fixed once the API made it."""

    kind: OperatorKind
    params: p.OperatorParams = field(default_factory=p.OperatorParams, repr=False)

    def __post_init__(self) -> None:
        # A misspelt kind, or parameters of another kind, fail here, where the program is
        # written, not on an executor.
        kind = OperatorKind(self.kind)
        object.__setattr__(self, "kind", kind)
        expected = PARAMETERS[kind]
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
