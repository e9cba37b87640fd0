"""flowmagic: Apache Flink's four-layer execution model in Jupyter, running on Apache Spark.

Write a DataStream program, and flowmagic builds the StreamGraph, JobGraph and
ExecutionGraph exactly as Flink 2.3 would (same ids, names, chains and wiring), draws them,
and runs the ExecutionGraph on a SparkSession.
"""

from flowmagic.api import (
    AggregateFunction,
    AggregatingStateDescriptor,
    BroadcastProcessFunction,
    BucketAssigner,
    CoFlatMapFunction,
    CoGroupFunction,
    CoMapFunction,
    CoProcessFunction,
    CountEvictor,
    CountTrigger,
    Duration,
    Encoder,
    EventTimeSessionWindows,
    FileSink,
    FilterFunction,
    FlatJoinFunction,
    FlatMapFunction,
    GlobalWindows,
    JoinFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    ListStateDescriptor,
    MapFunction,
    MapStateDescriptor,
    OutputFileConfig,
    OutputTag,
    Partitioner,
    ProcessFunction,
    ProcessingTimeSessionWindows,
    ProcessJoinFunction,
    ProcessWindowFunction,
    PurgingTrigger,
    ReduceFunction,
    ReducingStateDescriptor,
    RollingPolicy,
    Row,
    SinkFunction,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    StateTtlConfig,
    StreamExecutionEnvironment,
    Time,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    Types,
    ValueStateDescriptor,
    Watermark,
    WatermarkGenerator,
    WatermarkStrategy,
    WindowFunction,
)
from flowmagic.api.pyflink_modules import install as _install_missing_pyflink_modules
from flowmagic.errors import FlowError
from flowmagic.key_groups import (
    assign_key_to_parallel_operator,
    assign_to_key_group,
    compute_default_max_parallelism,
)
from flowmagic.vocabulary.pipeline_config import RuntimeExecutionMode

__version__ = "0.1.0"

__all__ = [
    "AggregateFunction",
    "AggregatingStateDescriptor",
    "BroadcastProcessFunction",
    "BucketAssigner",
    "CoFlatMapFunction",
    "CoGroupFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "CountEvictor",
    "CountTrigger",
    "Duration",
    "Encoder",
    "EventTimeSessionWindows",
    "FileSink",
    "FilterFunction",
    "FlatJoinFunction",
    "FlatMapFunction",
    "FlowError",
    "GlobalWindows",
    "JoinFunction",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "ListStateDescriptor",
    "MapFunction",
    "MapStateDescriptor",
    "OutputFileConfig",
    "OutputTag",
    "Partitioner",
    "ProcessFunction",
    "ProcessJoinFunction",
    "ProcessWindowFunction",
    "ProcessingTimeSessionWindows",
    "PurgingTrigger",
    "ReduceFunction",
    "ReducingStateDescriptor",
    "RollingPolicy",
    "Row",
    "RuntimeExecutionMode",
    "SinkFunction",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "StateTtlConfig",
    "StreamExecutionEnvironment",
    "Time",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "Types",
    "ValueStateDescriptor",
    "Watermark",
    "WatermarkGenerator",
    "WatermarkStrategy",
    "WindowFunction",
    "assign_key_to_parallel_operator",
    "assign_to_key_group",
    "compute_default_max_parallelism",
]

# ``import flowmagic.datastream.connectors.kafka`` (PyFlink's module) says what to use instead.
_install_missing_pyflink_modules()


def load_ipython_extension(ipython):  # pragma: no cover - exercised through IPython
    """``%load_ext flowmagic``: register the ``%flow`` / ``%%flow`` magics."""
    from flowmagic.magics import load_ipython_extension as load

    load(ipython)
