"""The DataStream API: environment, streams, windows, time, watermarks, sinks."""

from flowmagic.api.broadcast import (
    BroadcastConnectedStream,
    BroadcastProcessFunction,
    BroadcastStream,
    KeyedBroadcastProcessFunction,
)
from flowmagic.api.bucket_assigner import BucketAssigner
from flowmagic.api.datastream import (
    ConnectedStreams,
    DataStream,
    DataStreamSink,
    KeyedStream,
)
from flowmagic.api.environment import StreamExecutionEnvironment
from flowmagic.api.functions import (
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
    SinkFunction,
    WindowFunction,
)
from flowmagic.api.joins import CoGroupFunction, FlatJoinFunction, JoinFunction, ProcessJoinFunction
from flowmagic.api.output_file_config import OutputFileConfig
from flowmagic.api.rolling_policy import RollingPolicy
from flowmagic.api.sinks import Encoder, FileSink
from flowmagic.api.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flowmagic.api.state_ttl import StateTtlConfig
from flowmagic.api.time import Duration, Time
from flowmagic.api.types import Row, Types
from flowmagic.api.watermarks import Watermark, WatermarkGenerator, WatermarkStrategy
from flowmagic.api.windowed import AllWindowedStream, WindowedStream
from flowmagic.api.windows import (
    CountEvictor,
    CountTrigger,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    PurgingTrigger,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)

__all__ = [
    "AggregateFunction",
    "AggregatingStateDescriptor",
    "AllWindowedStream",
    "BroadcastConnectedStream",
    "BroadcastProcessFunction",
    "BroadcastStream",
    "BucketAssigner",
    "CoFlatMapFunction",
    "CoGroupFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "ConnectedStreams",
    "CountEvictor",
    "CountTrigger",
    "DataStream",
    "DataStreamSink",
    "Duration",
    "Encoder",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "FileSink",
    "FilterFunction",
    "FlatJoinFunction",
    "FlatMapFunction",
    "GlobalWindows",
    "JoinFunction",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStream",
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
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "ReduceFunction",
    "ReducingStateDescriptor",
    "RollingPolicy",
    "Row",
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
    "WindowedStream",
]
