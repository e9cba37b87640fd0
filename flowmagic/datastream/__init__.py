"""PyFlink's ``pyflink.datastream``: the environment, streams and function classes.

Replace ``pyflink`` by ``flowmagic`` in a PyFlink program's imports and it runs on
flowmagic; a PyFlink name flowmagic does not support raises
:class:`~flowmagic.errors.UnsupportedFeatureError` saying what to use instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowmagic.api import environment
from flowmagic.api.broadcast import BroadcastConnectedStream, BroadcastStream
from flowmagic.api.checkpointing import CheckpointConfig, CheckpointingMode, ExternalizedCheckpointRetention
from flowmagic.api.datastream import CachedDataStream, ConnectedStreams, DataStream, DataStreamSink, KeyedStream
from flowmagic.api.execution_config import ExecutionConfig
from flowmagic.api.pyflink import ASYNC, missing_names
from flowmagic.api.sources import SourceFunction
from flowmagic.api.windowed import AllWindowedStream, WindowedStream
from flowmagic.vocabulary.broadcast_functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from flowmagic.vocabulary.dialect import PYFLINK
from flowmagic.vocabulary.functions import (
    AggregateFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    OutputTag,
    Partitioner,
    ProcessFunction,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeContext,
    SinkFunction,
    TimerService,
    WindowFunction,
)
from flowmagic.vocabulary.pipeline_config import RuntimeExecutionMode
from flowmagic.vocabulary.time_domain import TimeDomain
from flowmagic.vocabulary.windows import (
    CountWindow,
    GlobalWindow,
    TimeWindow,
    Trigger,
    TriggerResult,
    Window,
    WindowAssigner,
)

if TYPE_CHECKING:
    from flowmagic.runtime import JobResult


class StreamExecutionEnvironment(environment.StreamExecutionEnvironment):
    """PyFlink's environment: flowmagic's, with PyFlink's default record type. A stream that
    declares no type (no ``output_type=``) holds pickled Python objects, which the print
    sink writes as ``str(record)`` (``('a', 1)``), as PyFlink prints them; flowmagic's own
    environment prints them as Flink prints Java values (``(a,1)``)."""

    dialect = PYFLINK

    def get_config(self) -> ExecutionConfig:  # type: ignore[override]  # PyFlink's returns its ExecutionConfig
        """The environment's :class:`~flowmagic.api.execution_config.ExecutionConfig`, as
        PyFlink's (``get_config().set_global_job_parameters({...})``)."""
        return self._execution_config

    def execute(self, job_name: str | None = None, *, executor: str = "spark", **options: Any) -> JobResult:
        """Run the program, then forget it, as Flink does: the next ``execute()`` runs only
        what was added since (flowmagic's own environment keeps its program, for notebooks)."""
        result = super().execute(job_name, executor=executor, **options)
        self._transformations.clear()
        return result


__all__ = [
    "AggregateFunction",
    "AllWindowedStream",
    "BroadcastConnectedStream",
    "BroadcastProcessFunction",
    "BroadcastStream",
    "CachedDataStream",
    "CheckpointConfig",
    "CheckpointingMode",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "ConnectedStreams",
    "CountWindow",
    "DataStream",
    "DataStreamSink",
    "ExternalizedCheckpointRetention",
    "FilterFunction",
    "FlatMapFunction",
    "GlobalWindow",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStream",
    "MapFunction",
    "OutputTag",
    "Partitioner",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "RuntimeExecutionMode",
    "SinkFunction",
    "SourceFunction",
    "StreamExecutionEnvironment",
    "TimeDomain",
    "TimeWindow",
    "TimerService",
    "Trigger",
    "TriggerResult",
    "Window",
    "WindowAssigner",
    "WindowFunction",
    "WindowedStream",
]

_STATE_BACKEND = "flowmagic keeps keyed state itself; set where checkpoints go with env.get_checkpoint_config()"

__getattr__ = missing_names(
    "flowmagic.datastream",
    {
        "AsyncDataStream": ASYNC,
        "AsyncFunction": ASYNC,
        "AsyncRetryStrategy": ASYNC,
        "AsyncRetryPredicate": ASYNC,
        "StateBackend": _STATE_BACKEND,
        "HashMapStateBackend": _STATE_BACKEND,
        "EmbeddedRocksDBStateBackend": _STATE_BACKEND,
        "CustomStateBackend": _STATE_BACKEND,
        "CheckpointStorage": "set checkpoint storage with env.get_checkpoint_config().set_checkpoint_storage(path)",
        "FileSystemCheckpointStorage": "use env.get_checkpoint_config().set_checkpoint_storage(path)",
        "JobManagerCheckpointStorage": "use env.get_checkpoint_config().set_checkpoint_storage(path)",
        "CustomCheckpointStorage": "use env.get_checkpoint_config().set_checkpoint_storage(path)",
        "SlotSharingGroup": "name a group with stream.slot_sharing_group(name)",
        "TimeCharacteristic": "Flink 2 has no time characteristic: event time comes from a WatermarkStrategy",
        "MergingWindowAssigner": "session windows are the merging assigners flowmagic has",
        "MemorySize": _STATE_BACKEND,
        "PredefinedOptions": _STATE_BACKEND,
    },
    __all__,
)
