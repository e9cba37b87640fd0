"""The parameters of each operator kind: what the API fixes and the runtime reads.

One frozen dataclass per family of kinds (:data:`flowmagic.graph.operators.PARAMETERS` says
which kind takes which), so that a field the runtime reads and the API does not set, or sets
under another name, is a type error rather than a ``KeyError`` on an executor. The user's
objects (functions, window assigners, watermark strategies, sinks) are the API's own; they
are named for the type checker only, as this layer sits below the API.

None of these parameters reaches a graph's JSON or an operator's hash: the graphs read only
an operator's kind and chaining strategy.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flowmagic.graph.operators import DriverSide
    from flowmagic.vocabulary.sinks import FileSink
    from flowmagic.vocabulary.state import MapStateDescriptor
    from flowmagic.vocabulary.types import TypeInformation
    from flowmagic.vocabulary.watermarks import WatermarkStrategy
    from flowmagic.vocabulary.windows import Evictor, Trigger, WindowAssigner

__all__ = [
    "Aggregation",
    "BroadcastProcessParams",
    "CoFunctionParams",
    "CoProcessParams",
    "CollectionSourceParams",
    "DatagenSourceParams",
    "FileMonitorSourceParams",
    "FileSourceParams",
    "FileSplitReaderParams",
    "FunctionParams",
    "IntervalJoinParams",
    "KeyedAggregationParams",
    "KeyedReduceParams",
    "OperatorParams",
    "PrintParams",
    "ProcessParams",
    "SequenceSourceParams",
    "SinkParams",
    "SocketSourceParams",
    "SourceParams",
    "SparkSourceParams",
    "SqlOperatorParams",
    "TimestampsWatermarksParams",
    "WindowFunctionKind",
    "WindowParams",
]


class Aggregation(enum.StrEnum):
    """The built-in aggregations of ``sum(position)``, ``min`` ..., by their API names."""

    SUM = "sum"
    MIN = "min"
    MAX = "max"
    MIN_BY = "min_by"
    MAX_BY = "max_by"


class WindowFunctionKind(enum.StrEnum):
    """How a window's contents become its results: the windowed stream's method that made it."""

    REDUCE = "reduce"
    AGGREGATE = "aggregate"
    PROCESS = "process"
    APPLY = "apply"
    #: ``sum``/``min``/``max``/``min_by``/``max_by`` of a field.
    AGGREGATION = "aggregation"


# eq=False: specs are compared by identity (the user's functions define no equality).
@dataclass(frozen=True, eq=False, kw_only=True)
class OperatorParams:
    """What every operator may have; the parameters of kinds that need nothing else."""

    #: The declared Row or Tuple output type: the runtime hands records on as PyFlink does.
    output_type: TypeInformation | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class SourceParams(OperatorParams):
    """What every source may have."""

    #: ``from_source()``'s strategy, applied by the source itself (no operator of its own).
    watermark_strategy: WatermarkStrategy | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class CollectionSourceParams(SourceParams):
    data: Sequence[Any]


@dataclass(frozen=True, eq=False, kw_only=True)
class SequenceSourceParams(SourceParams):
    start: int
    end: int


@dataclass(frozen=True, eq=False, kw_only=True)
class DatagenSourceParams(SourceParams):
    """``generator(index)`` (or ``generator(index, rng)`` when ``arity`` is 2; None: the index)
    for the indices below ``count`` (None: for ever), at most ``rows_per_second`` overall."""

    generator: Callable[..., Any] | None
    arity: int
    count: int | None
    rows_per_second: float | None
    seed: int


@dataclass(frozen=True, eq=False, kw_only=True)
class FileMonitorSourceParams(SourceParams):
    path: str


@dataclass(frozen=True, eq=False, kw_only=True)
class SocketSourceParams(SourceParams):
    host: str
    port: int
    delimiter: str
    max_retry: int


@dataclass(frozen=True, eq=False, kw_only=True)
class SparkSourceParams(SourceParams):
    frame: DriverSide


@dataclass(frozen=True, eq=False, kw_only=True)
class FileSourceParams(SourceParams):
    paths: tuple[str, ...]
    charset: str
    #: How often the paths are listed again; None: read once (bounded).
    discovery_interval_ms: int | None


@dataclass(frozen=True, eq=False, kw_only=True)
class FileSplitReaderParams(OperatorParams):
    path: str
    charset: str


@dataclass(frozen=True, eq=False, kw_only=True)
class FunctionParams(OperatorParams):
    """One user function (map, flat map, filter, a sink function)."""

    function: Any


@dataclass(frozen=True, eq=False, kw_only=True)
class ProcessParams(FunctionParams):
    #: Set on a keyed stream: the function has keyed state (and, keyed_process, timers).
    key_selector: Callable[[Any], Any] | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class BroadcastProcessParams(ProcessParams):
    descriptors: tuple[MapStateDescriptor, ...]


@dataclass(frozen=True, eq=False, kw_only=True)
class TimestampsWatermarksParams(OperatorParams):
    strategy: WatermarkStrategy


@dataclass(frozen=True, eq=False, kw_only=True)
class KeyedReduceParams(OperatorParams):
    key_selector: Callable[[Any], Any]
    function: Any


@dataclass(frozen=True, eq=False, kw_only=True)
class KeyedAggregationParams(OperatorParams):
    key_selector: Callable[[Any], Any]
    aggregation: Aggregation
    position: int | str


@dataclass(frozen=True, eq=False, kw_only=True)
class WindowParams(OperatorParams):
    key_selector: Callable[[Any], Any]
    function_kind: WindowFunctionKind
    assigner: WindowAssigner
    trigger: Trigger
    evictor: Evictor | None
    allowed_lateness: int
    #: The id of ``side_output_late_data``'s tag.
    late_tag: str | None
    #: PyFlink's Python window operator stamps a window's results with the time of what fired
    #: it; Java's with the window's max timestamp.
    stamps_firing_time: bool
    #: ``window_all``: keyed by a constant.
    all_windows: bool = False
    #: The reduce, aggregate, process or apply function (None for AGGREGATION).
    function: Any = None
    #: reduce()'s and aggregate()'s optional window function.
    window_function: Any = None
    #: AGGREGATION's aggregation and field.
    aggregation: Aggregation | None = None
    position: int | str | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class CoFunctionParams(OperatorParams):
    """A function per input side (or an object's two methods), first and second."""

    functions: tuple[Any, Any]


@dataclass(frozen=True, eq=False, kw_only=True)
class CoProcessParams(CoFunctionParams):
    #: Both inputs' key selectors, when both are keyed.
    key_selectors: tuple[Callable[[Any], Any], Callable[[Any], Any]] | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class IntervalJoinParams(OperatorParams):
    function: Any
    #: The bounds, inclusive, in milliseconds.
    lower: int
    upper: int
    #: The side outputs of each input's late records (tag ids).
    late_tags: tuple[str | None, str | None]
    key_selectors: tuple[Callable[[Any], Any], Callable[[Any], Any]]


@dataclass(frozen=True, eq=False, kw_only=True)
class PrintParams(OperatorParams):
    identifier: str | None
    stderr: bool
    #: The input's declared type, which decides how a record is printed.
    type_info: TypeInformation | None


@dataclass(frozen=True, eq=False, kw_only=True)
class SinkParams(OperatorParams):
    """A Sink V2's writer or committer."""

    sink: FileSink
    #: The writer's input type (None for the committer).
    type_info: TypeInformation | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class SqlOperatorParams(SourceParams):
    """A SQL operator or source: its ExecNode's id, type (``stream-exec-calc_1``) and
    description, the names of its output fields, the planner's node, and what it runs (the
    plain-data spec of :mod:`flowmagic.graph.sql_runtime` the planner generated)."""

    exec_node_id: int
    exec_type: str
    description: str
    field_names: tuple[str, ...]
    #: The physical plan node (``flowmagic.sql.physical``), None for the operators a sink adds.
    physical: Any = None
    #: Key field indexes of a keyed input (hash exchange), one tuple per input.
    keys: tuple[tuple[int, ...], ...] = ()
    #: What the runtime runs (a :class:`~flowmagic.graph.sql_runtime.SqlRuntimeSpec`); None
    #: for kinds the planner generates nothing for yet.
    runtime: Any = None
