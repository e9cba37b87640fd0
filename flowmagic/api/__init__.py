"""The DataStream API: the program builder (environment, streams, windowed, joined and
broadcast streams, sources and sinks), with the vocabulary programs are written in
(:mod:`flowmagic.vocabulary`: functions, windows, time, watermarks, state) under its names."""

from flowmagic.api.broadcast import BroadcastConnectedStream, BroadcastStream
from flowmagic.api.datastream import (
    ConnectedStreams,
    DataStream,
    DataStreamSink,
    KeyedStream,
)
from flowmagic.api.environment import StreamExecutionEnvironment
from flowmagic.api.windowed import AllWindowedStream, WindowedStream
from flowmagic.vocabulary.broadcast_functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from flowmagic.vocabulary.bucket_assigner import BucketAssigner
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
    SinkFunction,
    WindowFunction,
)
from flowmagic.vocabulary.join_functions import CoGroupFunction, FlatJoinFunction, JoinFunction, ProcessJoinFunction
from flowmagic.vocabulary.output_file_config import OutputFileConfig
from flowmagic.vocabulary.rolling_policy import RollingPolicy
from flowmagic.vocabulary.sinks import Encoder, FileSink
from flowmagic.vocabulary.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flowmagic.vocabulary.state_ttl import StateTtlConfig
from flowmagic.vocabulary.time import Duration, Time
from flowmagic.vocabulary.types import Row, Types
from flowmagic.vocabulary.watermarks import Watermark, WatermarkGenerator, WatermarkStrategy
from flowmagic.vocabulary.windows import (
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
