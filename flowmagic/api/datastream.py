"""DataStream, KeyedStream, ConnectedStreams and DataStreamSink (Flink's DataStream API).

Every method builds a transformation and registers it with the environment; no user
function is called while a program is written. Parallelism is fixed when the call is made
(``env.get_parallelism()`` at that moment), as in Flink.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, overload

from flowmagic.api.arguments import check_callable, check_descriptors, check_max_parallelism, check_parallelism
from flowmagic.errors import (
    IncompatibleStreamsError,
    InvalidParallelismError,
    InvalidTypeError,
    KeyedStreamRequiredError,
    ProgramError,
)
from flowmagic.graph.operators import ChainingStrategy, OperatorKind, OperatorSpec
from flowmagic.graph.partitioners import (
    BROADCAST,
    CUSTOM,
    FORWARD,
    GLOBAL,
    HASH,
    REBALANCE,
    RESCALE,
    SHUFFLE,
    Partitioner,
)
from flowmagic.graph.transformations import (
    CacheTransformation,
    LegacySinkTransformation,
    OneInputTransformation,
    PartitionTransformation,
    PhysicalTransformation,
    SideOutputTransformation,
    SinkTransformation,
    SourceTransformation,
    Transformation,
    TwoInputTransformation,
    UnionTransformation,
)
from flowmagic.vocabulary.functions import (
    CoProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    OutputTag,
    ProcessFunction,
)
from flowmagic.vocabulary.types import TypeInformation, check_type_info, is_tuple_type
from flowmagic.vocabulary.watermarks import WatermarkStrategy

if TYPE_CHECKING:
    from flowmagic.api.broadcast import BroadcastConnectedStream, BroadcastStream
    from flowmagic.api.environment import StreamExecutionEnvironment
    from flowmagic.api.joins import CoGroupedStreams, IntervalJoin, JoinedStreams
    from flowmagic.api.windowed import AllWindowedStream, WindowedStream
    from flowmagic.vocabulary.state import MapStateDescriptor
    from flowmagic.vocabulary.windows import WindowAssigner

__all__ = ["CachedDataStream", "ConnectedStreams", "DataStream", "DataStreamSink", "KeyedStream"]


def call_site() -> str | None:
    """``file:line`` of the innermost caller outside flowmagic (the user's cell line)."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("flowmagic"):
        frame = frame.f_back
    if frame is None:
        return None
    return call_site_of(frame)


def call_location_name() -> str:
    """Java's ``Utils.getCallLocationName()`` for the user's code: ``function(file:line)`` of
    the innermost caller outside flowmagic (``<module>(cell.py:3)`` at a cell's top level)."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("flowmagic"):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    site = call_site_of(frame)
    return f"{frame.f_code.co_name}({os.path.basename(site.rsplit(':', 1)[0])}:{frame.f_lineno})"


def call_site_of(frame: types.FrameType) -> str:
    """``file:line`` of ``frame``, a cell named by its hash rather than by the kernel's pid."""
    filename = frame.f_code.co_filename
    # ipykernel compiles cells to /tmp/ipykernel_<pid>/<hash of the cell>.py: keep the part
    # that names the cell, so that saved outputs do not change with the kernel's pid.
    if "ipykernel_" in filename:
        filename = f"<cell {os.path.splitext(os.path.basename(filename))[0]}>"
    return f"{filename}:{frame.f_lineno}"


#: Methods of KeyedStream that a DataStream lacks, with their non-keyed counterpart if any.
_KEYED_ONLY = {
    "window": "window_all",
    "count_window": "count_window_all",
    "reduce": None,
    "sum": None,
    "min": None,
    "max": None,
    "min_by": None,
    "max_by": None,
}


class DataStream:
    """A stream of records produced by a transformation."""

    def __init__(self, env: StreamExecutionEnvironment, transformation: Transformation):
        self._env = env
        self._transformation = transformation

    # -- introspection --------------------------------------------------------------------

    @property
    def transformation(self) -> Transformation:
        return self._transformation

    def get_id(self) -> int:
        return self._transformation.id

    def get_name(self) -> str:
        return self._transformation.name

    def get_parallelism(self) -> int:
        return self._transformation.parallelism

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        return self._env

    def get_type(self) -> TypeInformation | None:
        """The record type declared for this stream (``output_type=``, ``type_info=``), else
        the environment's default: None for flowmagic's (records print as Flink prints their
        Java values), ``Types.PICKLED_BYTE_ARRAY()`` for ``flowmagic.datastream``'s, as in
        PyFlink (records print as ``str(record)``). Types only decide how :meth:`print`
        writes records (see :mod:`flowmagic.vocabulary.types`)."""
        return self._env.declared_type(self._transformation)

    def __repr__(self) -> str:
        t = self._transformation
        return f"<{type(self).__name__} {t.name!r} id={t.id} parallelism={t.parallelism}>"

    def __getattr__(self, name: str) -> Any:
        # Only reached for names a DataStream lacks: those of keyed streams get a pointer.
        if name not in _KEYED_ONLY:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        whole = _KEYED_ONLY[name]
        raise KeyedStreamRequiredError(
            f"{name}() is a method of keyed streams, and this is a non-keyed {type(self).__name__}: "
            f"use key_by(...).{name}(...)" + (f", or {whole}(...) over the whole stream" if whole else "") + "."
        )

    # -- operator-only settings (reported clearly on non-operators) ------------------------

    def _operator(self, method: str) -> PhysicalTransformation:
        if not isinstance(self._transformation, PhysicalTransformation):
            raise ProgramError(
                f"{method}() can only be called on an operator; this stream comes from "
                f"{self._transformation.name!r} ({self._transformation.kind}), which is not one."
            )
        return self._transformation

    def set_parallelism(self, parallelism: int) -> DataStream:
        """Set this operator's parallelism (marks it as configured)."""
        t = self._operator("set_parallelism")
        check_parallelism(parallelism)
        if t.non_parallel and parallelism != 1:
            raise InvalidParallelismError("The parallelism of non parallel operator must be 1.")
        t.parallelism = parallelism
        t.parallelism_configured = True
        return self

    def set_max_parallelism(self, max_parallelism: int) -> DataStream:
        """Set the number of key groups (the upper bound of rescaling) of this operator."""
        t = self._operator("set_max_parallelism")
        check_max_parallelism(max_parallelism)
        if t.non_parallel and max_parallelism != 1:
            raise InvalidParallelismError("The maximum parallelism of non parallel operator must be 1.")
        t.max_parallelism = max_parallelism
        return self

    def name(self, name: str) -> DataStream:
        """Rename this operator (never changes its ids)."""
        if not isinstance(name, str):
            raise ProgramError(f"name() expects a str, got {name!r}.")
        self._operator("name").name = name
        return self

    def set_description(self, description: str) -> DataStream:
        """Set the description shown in plans (defaults to the name)."""
        self._operator("set_description").description = description
        return self

    def uid(self, uid: str) -> DataStream:
        """Give this operator a stable id: its vertex id is then the hash of ``uid``."""
        if not isinstance(uid, str) or not uid:
            raise ProgramError("uid() expects a non-empty str.")
        self._operator("uid").uid = uid
        return self

    def set_uid_hash(self, uid_hash: str) -> DataStream:
        """Set the user-defined operator id (32 hex digits) used to match savepoint state."""
        t = self._operator("set_uid_hash")
        if (
            not isinstance(uid_hash, str)
            or len(uid_hash) != 32
            or any(c not in "0123456789abcdefABCDEF" for c in uid_hash)
        ):
            raise ProgramError(f"Node hash must be a 32 character String that describes a hex code. Found: {uid_hash}")
        t.uid_hash = uid_hash
        return self

    def slot_sharing_group(self, name: str) -> DataStream:
        """Put this operator into the named slot sharing group."""
        if not isinstance(name, str) or not name:
            raise ProgramError("slot_sharing_group() expects a non-empty str.")
        self._operator("slot_sharing_group").slot_sharing_group = name
        return self

    def disable_chaining(self) -> DataStream:
        """Never chain this operator to its predecessor or successors."""
        self._operator("disable_chaining").chaining_strategy = ChainingStrategy.NEVER
        return self

    def start_new_chain(self) -> DataStream:
        """Start a new chain at this operator."""
        self._operator("start_new_chain").chaining_strategy = ChainingStrategy.HEAD
        return self

    # -- one-input operators --------------------------------------------------------------

    def _one_input(
        self,
        name: str,
        operator: OperatorSpec,
        *,
        stream_class: type[DataStream] | None = None,
        parallelism: int | None = None,
        configured: bool = False,
        state_key: Callable[[Any], Any] | None = None,
        description: str | None = None,
        output_type: TypeInformation | None = None,
    ) -> DataStream:
        t = OneInputTransformation(
            id=self._env.new_id(),
            name=name,
            parallelism=self._env.get_parallelism() if parallelism is None else parallelism,
            inputs=[self._transformation],
            parallelism_configured=configured,
            description=description,
            operator=_typed(operator, check_type_info(output_type, f"{name} output_type")),
            state_key=state_key if state_key is not None else self._state_key(),
            call_site=call_site(),
        )
        self._env.add_operator(t)
        self._env.declare_type(t, check_type_info(output_type, f"{name} output_type"))
        return (stream_class or DataStream)(self._env, t)

    def _state_key(self) -> Callable[[Any], Any] | None:
        return None

    def map(self, function: Callable[[Any], Any], output_type: TypeInformation | None = None) -> DataStream:
        """Apply ``function`` to every record; ``output_type`` declares the result's type."""
        check_callable(function, "map()", "map")
        return self._one_input("Map", OperatorSpec(OperatorKind.MAP, {"function": function}), output_type=output_type)

    def flat_map(
        self, function: Callable[[Any], Iterable[Any]], output_type: TypeInformation | None = None
    ) -> DataStream:
        """Apply ``function`` to every record and emit every element of what it returns."""
        check_callable(function, "flat_map()", "flat_map")
        spec = OperatorSpec(OperatorKind.FLAT_MAP, {"function": function})
        return self._one_input("Flat Map", spec, output_type=output_type)

    def filter(self, function: Callable[[Any], bool]) -> DataStream:
        """Keep the records for which ``function`` is true."""
        check_callable(function, "filter()", "filter")
        spec = OperatorSpec(OperatorKind.FILTER, {"function": function})
        return self._one_input("Filter", spec, output_type=self.get_type())

    def process(self, function: Any, output_type: TypeInformation | None = None) -> DataStream:
        """Call ``function.process_element(value, ctx)`` per record, which returns (or yields)
        the records to emit, or ``process_element(value, ctx, out)`` calling ``out.collect(v)``;
        ``ctx.output(tag, v)`` emits to a side output."""
        check_callable(function, "process()", "process_element")
        spec = OperatorSpec(OperatorKind.PROCESS, {"function": function})
        return self._one_input("Process", spec, output_type=output_type)

    def assign_timestamps_and_watermarks(self, strategy: WatermarkStrategy) -> DataStream:
        """Extract event timestamps and generate watermarks with ``strategy``."""
        if not isinstance(strategy, WatermarkStrategy):
            raise ProgramError(f"assign_timestamps_and_watermarks() expects a WatermarkStrategy, got {strategy!r}.")
        return self._one_input(
            "Timestamps/Watermarks",
            OperatorSpec(OperatorKind.TIMESTAMPS_WATERMARKS, {"strategy": strategy}),
            parallelism=self._transformation.parallelism,
            output_type=self.get_type(),
        )

    # -- partitioning ---------------------------------------------------------------------

    def _partition(self, partitioner: Partitioner, stream_class: type[DataStream] | None = None, **kwargs: Any) -> Any:
        t = PartitionTransformation(
            id=self._env.new_id(),
            name="Partition",
            parallelism=self._transformation.parallelism,
            inputs=[self._transformation],
            partitioner=partitioner,
            call_site=call_site(),
        )
        self._env.declare_type(t, self.get_type())
        if stream_class is None:
            return DataStream(self._env, t)
        return stream_class(self._env, t, **kwargs)

    def _repartition(self, partitioner: Partitioner) -> DataStream:
        """A new partitioning of this stream (Flink's ``setConnectionType``)."""
        return self._partition(partitioner)

    def key_by(self, key_selector: Callable[[Any], Any], key_type: TypeInformation | None = None) -> KeyedStream:
        """Partition by key: records with equal keys go to the same subtask (HASH).

        Keys are routed by their values' Java ``hashCode``, as Java's ``keyBy`` routes them. In
        a program of PyFlink's API (:mod:`flowmagic.datastream`), a key goes where PyFlink
        sends it: by the Java hash of a Row holding it as ``key_type``, or its pickled bytes."""
        if isinstance(key_selector, (int, str)):
            raise InvalidTypeError(
                f"key_by({key_selector!r}): keys by field position or name were removed in Flink 2 "
                "(keyBy(int...), keyBy(String...)); select the key with a function, e.g. "
                "key_by(lambda record: record[0])"
            )
        check_callable(key_selector, "key_by()", "get_key")
        check_type_info(key_type, "key_by() key_type")
        partitioner = Partitioner(
            HASH,
            key_selector=key_selector,
            call_site=call_site(),
            pyflink_key_type=self._env.dialect.key_type(key_type),
        )
        return self._partition(partitioner, KeyedStream, key_selector=key_selector)

    def shuffle(self) -> DataStream:
        """Send every record to a uniformly random subtask."""
        return self._repartition(Partitioner(SHUFFLE))

    def rebalance(self) -> DataStream:
        """Round-robin records over all downstream subtasks."""
        return self._repartition(Partitioner(REBALANCE))

    def rescale(self) -> DataStream:
        """Round-robin records over a local subset of downstream subtasks (POINTWISE)."""
        return self._repartition(Partitioner(RESCALE))

    @overload
    def broadcast(self) -> DataStream: ...

    @overload
    def broadcast(
        self, broadcast_state_descriptor: MapStateDescriptor, *other_broadcast_state_descriptors: MapStateDescriptor
    ) -> BroadcastStream: ...

    def broadcast(
        self,
        broadcast_state_descriptor: MapStateDescriptor | None = None,
        *other_broadcast_state_descriptors: MapStateDescriptor,
    ) -> DataStream | BroadcastStream:
        """Send every record to every downstream subtask. Given MapStateDescriptors, a
        :class:`~flowmagic.api.broadcast.BroadcastStream` with those broadcast states, to
        ``connect()`` a stream to."""
        if broadcast_state_descriptor is None:
            return self._repartition(Partitioner(BROADCAST))
        from flowmagic.api.broadcast import BroadcastStream

        descriptors = check_descriptors((broadcast_state_descriptor, *other_broadcast_state_descriptors))
        return BroadcastStream(self._env, self._repartition(Partitioner(BROADCAST)), descriptors)

    def forward(self) -> DataStream:
        """Send records to the subtask of the same index (needs equal parallelism)."""
        return self._repartition(Partitioner(FORWARD))

    def global_(self) -> DataStream:
        """Send every record to the first downstream subtask."""
        return self._repartition(Partitioner(GLOBAL))

    def partition_custom(self, partitioner: Any, key_selector: Callable[[Any], Any]) -> DataStream:
        """Send each record to ``partitioner(key, num_partitions)`` (or ``partitioner.partition``)."""
        check_callable(partitioner, "partition_custom()", "partition")
        check_callable(key_selector, "partition_custom() key selector", "get_key")
        return self._repartition(
            Partitioner(CUSTOM, key_selector=key_selector, function=partitioner, call_site=call_site())
        )

    # -- combining ------------------------------------------------------------------------

    def _check_same_env(self, other: Any, method: str) -> None:
        if not isinstance(other, DataStream):
            raise IncompatibleStreamsError(f"{method}() expects a DataStream, got {type(other).__name__}.")
        if other._env is not self._env:
            raise IncompatibleStreamsError(
                f"{method}(): the streams belong to different StreamExecutionEnvironments; "
                "all streams of one job must come from the same environment."
            )

    def union(self, *streams: DataStream) -> DataStream:
        """Merge this stream with ``streams`` (no node of its own)."""
        if not streams:
            raise ProgramError("union() needs at least one other stream.")
        for stream in streams:
            self._check_same_env(stream, "union")
        t = UnionTransformation(
            id=self._env.new_id(),
            name="Union",
            parallelism=self._transformation.parallelism,
            inputs=[self._transformation, *(s._transformation for s in streams)],
            call_site=call_site(),
        )
        self._env.declare_type(t, self.get_type())
        return DataStream(self._env, t)

    @overload
    def connect(self, stream: DataStream) -> ConnectedStreams: ...

    @overload
    def connect(self, stream: BroadcastStream) -> BroadcastConnectedStream: ...

    def connect(self, stream: DataStream | BroadcastStream) -> ConnectedStreams | BroadcastConnectedStream:
        """Pair this stream with ``stream`` for a two-input operator (``Co-Map`` ...); with a
        ``BroadcastStream``, for the broadcast state pattern (``process(BroadcastProcessFunction)``)."""
        from flowmagic.api.broadcast import BroadcastConnectedStream, BroadcastStream

        if isinstance(stream, BroadcastStream):
            return BroadcastConnectedStream(self._env, self, stream)
        self._check_same_env(stream, "connect")
        return ConnectedStreams(self._env, self, stream)

    def join(self, stream: DataStream) -> JoinedStreams:
        """Window join: ``join(other).where(k1).equal_to(k2).window(assigner).apply(JoinFunction)``."""
        from flowmagic.api.joins import JoinedStreams

        return JoinedStreams(self, stream)

    def co_group(self, stream: DataStream) -> CoGroupedStreams:
        """Window coGroup: ``co_group(other).where(k1).equal_to(k2).window(assigner).apply(CoGroupFunction)``."""
        from flowmagic.api.joins import CoGroupedStreams

        return CoGroupedStreams(self, stream)

    # -- side outputs ---------------------------------------------------------------------

    def get_side_output(self, tag: OutputTag) -> DataStream:
        """The records this operator emitted with ``ctx.output(tag, value)``."""
        if not isinstance(tag, OutputTag):
            raise ProgramError(f"get_side_output() expects an OutputTag, got {tag!r}.")
        self._operator("get_side_output")
        t = SideOutputTransformation(
            id=self._env.new_id(),
            name="SideOutput",
            parallelism=self._transformation.parallelism,
            inputs=[self._transformation],
            tag=tag.tag_id,
            call_site=call_site(),
        )
        self._env.declare_type(t, check_type_info(tag.type_info, "OutputTag type_info"))
        return DataStream(self._env, t)

    # -- windows --------------------------------------------------------------------------

    def window_all(self, assigner: WindowAssigner) -> AllWindowedStream:
        """Window the whole stream in one non-parallel operator."""
        from flowmagic.api.windowed import AllWindowedStream

        return AllWindowedStream(self, assigner)

    def count_window_all(self, size: int, slide: int | None = None) -> AllWindowedStream:
        """Non-keyed count windows of ``size`` records, firing every ``slide`` if given."""
        from flowmagic.api.windowed import AllWindowedStream

        return AllWindowedStream.count(self, size, slide)

    # -- sinks ----------------------------------------------------------------------------

    def _legacy_sink(self, name: str, operator: OperatorSpec) -> DataStreamSink:
        t = LegacySinkTransformation(
            id=self._env.new_id(),
            name=name,
            parallelism=self._env.get_parallelism(),
            inputs=[self._transformation],
            operator=operator,
            state_key=self._state_key(),
            call_site=call_site(),
        )
        self._env.add_operator(t)
        return DataStreamSink(self._env, t)

    def _print(self, name: str, sink_identifier: str | None, stderr: bool) -> DataStreamSink:
        params = {"identifier": sink_identifier, "stderr": stderr, "type_info": self.get_type()}
        return self._legacy_sink(name, OperatorSpec(OperatorKind.PRINT, params))

    def cache(self) -> CachedDataStream:
        """Cache this stream's result for later jobs, as Flink's ``cache()`` (BATCH only; a
        STREAMING job ignores it). Only an operator's or a source's stream can be cached.

        In BATCH the job writes it with a ``CacheWrite`` vertex, as Flink does. flowmagic keeps
        no result between jobs, so a later job computes the cached stream again: what PyFlink
        2.3's local executor does too (its second job reads the source and writes the cache
        again), and the records are the same."""
        t = self._transformation
        if type(t) not in (SourceTransformation, OneInputTransformation, TwoInputTransformation):
            raise InvalidTypeError(
                "cache() caches the stream of an operator or a source (Flink's SingleOutputStreamOperator), "
                f"not one made by {type(t).__name__.removesuffix('Transformation').lower()}(): cache the stream "
                "before it"
            )
        cached = CacheTransformation(
            id=self._env.new_id(),
            name="CacheWrite",
            parallelism=t.parallelism,
            inputs=[t],
            operator=OperatorSpec(OperatorKind.CACHE_WRITE, {}),
            chaining_strategy=ChainingStrategy.HEAD,
            call_site=call_site(),
        )
        self._env.add_operator(cached)
        self._env.declare_type(cached, self.get_type())
        return CachedDataStream(self._env, cached)

    def print(self, sink_identifier: str | None = None) -> DataStreamSink:
        """Print every record to stdout as ``[id:][subtask+1]> record`` (Flink's format; the
        record as :func:`~flowmagic.runtime.records.printed_string` writes its declared type)."""
        return self._print("Print to Std. Out", sink_identifier, False)

    def print_to_err(self, sink_identifier: str | None = None) -> DataStreamSink:
        """Like :meth:`print`, to stderr."""
        return self._print("Print to Std. Err", sink_identifier, True)

    def add_sink(self, function: Callable[[Any], None]) -> DataStreamSink:
        """Call ``function(record)`` (or ``function.invoke(record)``) for every record."""
        check_callable(function, "add_sink()", "invoke")
        return self._legacy_sink("Unnamed", OperatorSpec(OperatorKind.SINK_FUNCTION, {"function": function}))

    def sink_to(self, sink: Any) -> DataStreamSink:
        """Write to a Sink V2 (e.g. :class:`flowmagic.FileSink`)."""
        if not hasattr(sink, "has_committer"):
            raise ProgramError(f"sink_to() expects a sink such as FileSink, got {sink!r}.")
        t = SinkTransformation(
            id=self._env.new_id(),
            name="Sink",
            parallelism=self._env.get_parallelism(),
            inputs=[self._transformation],
            sink=sink,
            record_type=self.get_type(),
            call_site=call_site(),
        )
        self._env.add_operator(t)
        return DataStreamSink(self._env, t)

    def execute_and_collect(
        self, job_execution_name: str | None = None, limit: int | None = None, *, executor: str = "spark"
    ) -> Iterator[Any]:
        """Run the job and return an iterator over this stream's records.

        ``executor`` is ``"spark"`` or ``"local"`` (in this process), as for ``env.execute()``.
        """
        return self._env.collect_stream(self, job_execution_name, limit, executor)


class CachedDataStream(DataStream):
    """A stream whose result ``cache()`` keeps for later jobs (PyFlink's ``CachedDataStream``)."""

    def invalidate(self) -> None:
        """Release the cached result. flowmagic keeps none between jobs (each job computes
        the cached stream), so there is nothing to release; kept for PyFlink's programs."""


class KeyedStream(DataStream):
    """A stream partitioned by key; operators on it have per-key state."""

    def __init__(
        self, env: StreamExecutionEnvironment, transformation: Transformation, key_selector: Callable[[Any], Any]
    ):
        super().__init__(env, transformation)
        self._key_selector = key_selector

    def cache(self) -> CachedDataStream:
        """Not for keyed streams, as in PyFlink."""
        raise InvalidTypeError("Cache for KeyedStream is not supported.")

    @property
    def key_selector(self) -> Callable[[Any], Any]:
        return self._key_selector

    def _state_key(self) -> Callable[[Any], Any] | None:
        return self._key_selector

    def _keyed(
        self, name: str, kind: OperatorKind, output_type: TypeInformation | None = None, **params: Any
    ) -> DataStream:
        spec = OperatorSpec(kind, {"key_selector": self._key_selector, **params})
        return self._one_input(name, spec, output_type=output_type)

    def _repartition(self, partitioner: Partitioner) -> DataStream:
        # Flink's KeyedStream overrides setConnectionType: its HASH partitioning is what keyed
        # state relies on. key_by() makes a new KeyedStream and stays allowed.
        raise ProgramError("Cannot override partitioning for KeyedStream.")

    def process(self, function: Any, output_type: TypeInformation | None = None) -> DataStream:
        """Call ``function.process_element(value, ctx)`` (or ``(value, ctx, out)``) per record,
        with per-key state and timers (``on_timer``).

        As in Flink, the function's class names the operator: a plain ``ProcessFunction``
        makes a "Process" operator (keyed state, sorted input in BATCH), a
        ``KeyedProcessFunction`` (or any other callable) a "KeyedProcess" one.
        """
        check_callable(function, "process()", "process_element")
        if isinstance(function, ProcessFunction) and not isinstance(function, KeyedProcessFunction):
            return self._keyed("Process", OperatorKind.PROCESS, output_type, function=function)
        return self._keyed("KeyedProcess", OperatorKind.KEYED_PROCESS, output_type, function=function)

    def reduce(self, function: Callable[[Any, Any], Any]) -> DataStream:
        """Rolling reduce per key: emits the running result for every record (STREAMING)."""
        check_callable(function, "reduce()", "reduce")
        return self._keyed("Keyed Reduce", OperatorKind.KEYED_REDUCE, self.get_type(), function=function)

    def _aggregate(self, aggregation: str, position: int | str) -> DataStream:
        if isinstance(position, bool) or not isinstance(position, (int, str)):
            raise ProgramError(f"{aggregation}() expects a field position (int) or name (str), got {position!r}.")
        return self._keyed(
            "Keyed Aggregation",
            OperatorKind.KEYED_AGGREGATION,
            self.get_type(),
            aggregation=aggregation,
            position=position,
        )

    def sum(self, position: int | str = 0) -> DataStream:
        """Rolling sum of field ``position`` per key."""
        return self._aggregate("sum", position)

    def min(self, position: int | str = 0) -> DataStream:
        """Rolling minimum of field ``position``; other fields keep the key's first record's values."""
        return self._aggregate("min", position)

    def max(self, position: int | str = 0) -> DataStream:
        """Rolling maximum of field ``position``; other fields keep the key's first record's values."""
        return self._aggregate("max", position)

    def min_by(self, position: int | str = 0) -> DataStream:
        """The whole record with the smallest field ``position`` so far (first one on ties)."""
        return self._aggregate("min_by", position)

    def max_by(self, position: int | str = 0) -> DataStream:
        """The whole record with the largest field ``position`` so far (first one on ties)."""
        return self._aggregate("max_by", position)

    def window(self, assigner: WindowAssigner) -> WindowedStream:
        """Group each key's records into windows of ``assigner``."""
        from flowmagic.api.windowed import WindowedStream

        return WindowedStream(self, assigner)

    def count_window(self, size: int, slide: int | None = None) -> WindowedStream:
        """Per-key windows of ``size`` records, firing every ``slide`` records if given."""
        from flowmagic.api.windowed import WindowedStream

        return WindowedStream.count(self, size, slide)

    def interval_join(self, other: KeyedStream) -> IntervalJoin:
        """Interval join with another keyed stream: ``.between(lower, upper).process(ProcessJoinFunction)``."""
        from flowmagic.api.joins import IntervalJoin

        return IntervalJoin(self, other)


class ConnectedStreams:
    """Two streams feeding one two-input operator."""

    def __init__(self, env: StreamExecutionEnvironment, first: DataStream, second: DataStream):
        self._env = env
        self.first = first
        self.second = second

    def __repr__(self) -> str:
        return f"<ConnectedStreams {self.first!r} + {self.second!r}>"

    def _keys(self) -> tuple[Callable[[Any], Any] | None, Callable[[Any], Any] | None]:
        return self.first._state_key(), self.second._state_key()

    def _two_input(self, name: str, operator: OperatorSpec, output_type: TypeInformation | None) -> DataStream:
        key1, key2 = self._keys()
        t = TwoInputTransformation(
            id=self._env.new_id(),
            name=name,
            parallelism=self._env.get_parallelism(),
            inputs=[self.first.transformation, self.second.transformation],
            operator=_typed(operator, check_type_info(output_type, f"{name} output_type")),
            state_key1=key1,
            state_key2=key2,
            call_site=call_site(),
        )
        self._env.add_operator(t)
        self._env.declare_type(t, check_type_info(output_type, f"{name} output_type"))
        return DataStream(self._env, t)

    def key_by(
        self,
        key_selector1: Callable[[Any], Any],
        key_selector2: Callable[[Any], Any],
        key_type: TypeInformation | None = None,
    ) -> ConnectedStreams:
        """Key both inputs, so that the operator sees matching keys of both in one subtask."""
        check_type_info(key_type, "key_by() key_type")
        first, second = self.first.key_by(key_selector1, key_type), self.second.key_by(key_selector2, key_type)
        return ConnectedStreams(self._env, first, second)

    def map(
        self,
        function1: Callable[[Any], Any],
        function2: Callable[[Any], Any] | TypeInformation | None = None,
        output_type: TypeInformation | None = None,
    ) -> DataStream:
        """``function1`` maps the first input, ``function2`` the second, or one object with
        map1/map2 (then, as in PyFlink, the second argument may be the ``output_type``)."""
        function2, output_type = _type_in_second_place(function2, output_type)
        functions = _pair(function1, function2, "map", ("map1", "map2"))
        spec = OperatorSpec(OperatorKind.CO_MAP, {"functions": functions})
        return self._two_input("Co-Map", spec, output_type)

    def flat_map(
        self,
        function1: Callable[[Any], Iterable[Any]],
        function2: Callable[[Any], Iterable[Any]] | TypeInformation | None = None,
        output_type: TypeInformation | None = None,
    ) -> DataStream:
        """Like :meth:`map`, each function returning an iterable of records."""
        function2, output_type = _type_in_second_place(function2, output_type)
        functions = _pair(function1, function2, "flat_map", ("flat_map1", "flat_map2"))
        spec = OperatorSpec(OperatorKind.CO_FLAT_MAP, {"functions": functions})
        return self._two_input("Co-Flat Map", spec, output_type)

    def process(self, function1: Any, function2: Any = None, output_type: TypeInformation | None = None) -> DataStream:
        """``process_element1/2(value, ctx)`` returning (or yielding) records, or
        ``(value, ctx, out)``: one function per input, or one object with both methods
        (then the second argument may be the ``output_type``, as in PyFlink).

        As in Flink, a ``KeyedCoProcessFunction`` makes "Co-Keyed-Process" and needs both
        inputs keyed; a plain ``CoProcessFunction`` makes "Co-Process" (with keyed state and
        timers when both inputs are keyed). Two plain callables are named by the inputs.
        """
        function2, output_type = _type_in_second_place(function2, output_type)
        functions = _pair(function1, function2, "process", ("process_element1", "process_element2"))
        key1, key2 = self._keys()
        both_keyed = key1 is not None and key2 is not None
        if isinstance(function1, KeyedCoProcessFunction) and not both_keyed:
            raise ProgramError(
                "KeyedCoProcessFunction can only be used when both input streams are of type KeyedStream."
            )
        plain = isinstance(function1, CoProcessFunction) and not isinstance(function1, KeyedCoProcessFunction)
        name = "Co-Process" if plain or not both_keyed else "Co-Keyed-Process"
        if both_keyed:
            params = {"functions": functions, "key_selectors": (key1, key2)}
            return self._two_input(name, OperatorSpec(OperatorKind.CO_KEYED_PROCESS, params), output_type)
        return self._two_input(name, OperatorSpec(OperatorKind.CO_PROCESS, {"functions": functions}), output_type)


def _type_in_second_place(function2: Any, output_type: Any) -> tuple[Any, Any]:
    """PyFlink's ``connected.map(co_function, output_type)``: a type where flowmagic's
    two-function form has its second function."""
    if isinstance(function2, TypeInformation):
        if output_type is not None:
            raise ProgramError("output_type given twice (as the second argument and by name).")
        return None, function2
    return function2, output_type


def _pair(function1: Any, function2: Any, method: str, names: tuple[str, str]) -> tuple[Any, Any]:
    if function2 is None:
        if all(hasattr(function1, name) for name in names):
            return getattr(function1, names[0]), getattr(function1, names[1])
        raise ProgramError(
            f"ConnectedStreams.{method}() needs two functions (one per input) or one object with "
            f"{names[0]}() and {names[1]}()."
        )
    check_callable(function1, f"ConnectedStreams.{method}() first function")
    check_callable(function2, f"ConnectedStreams.{method}() second function")
    return function1, function2


class DataStreamSink:
    """The end of a stream: settings of the sink operator."""

    def __init__(self, env: StreamExecutionEnvironment, transformation: Transformation):
        self._env = env
        self._transformation = transformation

    @property
    def transformation(self) -> Transformation:
        return self._transformation

    def __repr__(self) -> str:
        t = self._transformation
        return f"<DataStreamSink {t.name!r} id={t.id} parallelism={t.parallelism}>"

    def _as_stream(self) -> DataStream:
        return DataStream(self._env, self._transformation)

    # The sink's settings are an operator's settings: the same checks, through DataStream.

    def name(self, name: str) -> DataStreamSink:
        self._as_stream().name(name)
        return self

    def set_description(self, description: str) -> DataStreamSink:
        self._as_stream().set_description(description)
        return self

    def uid(self, uid: str) -> DataStreamSink:
        self._as_stream().uid(uid)
        return self

    def set_uid_hash(self, uid_hash: str) -> DataStreamSink:
        self._as_stream().set_uid_hash(uid_hash)
        return self

    def set_parallelism(self, parallelism: int) -> DataStreamSink:
        self._as_stream().set_parallelism(parallelism)
        return self

    def set_max_parallelism(self, max_parallelism: int) -> DataStreamSink:
        self._as_stream().set_max_parallelism(max_parallelism)
        return self

    def slot_sharing_group(self, name: str) -> DataStreamSink:
        self._as_stream().slot_sharing_group(name)
        return self

    def disable_chaining(self) -> DataStreamSink:
        self._as_stream().disable_chaining()
        return self


def _typed(operator: OperatorSpec, output_type: TypeInformation | None) -> OperatorSpec:
    """``operator`` with its declared Row or Tuple ``output_type``: the runtime hands its
    records on as PyFlink does (Rows named by the type; anything else fails the job)."""
    if output_type is None or not (output_type.field_names is not None or is_tuple_type(output_type)):
        return operator
    return OperatorSpec(operator.kind, {**operator.params, "output_type": output_type})
