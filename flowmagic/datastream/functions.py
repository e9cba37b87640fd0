"""PyFlink's ``pyflink.datastream.functions``: the user function classes."""

from flowmagic.api.pyflink import ASYNC, missing_names
from flowmagic.api.sources import SourceFunction
from flowmagic.vocabulary.broadcast_functions import (
    BaseBroadcastProcessFunction,
    BroadcastProcessFunction,
    KeyedBroadcastProcessFunction,
)
from flowmagic.vocabulary.functions import (
    AggregateFunction,
    AllWindowFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    Partitioner,
    ProcessAllWindowFunction,
    ProcessFunction,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeContext,
    SinkFunction,
    TimerService,
    WindowFunction,
)

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "BaseBroadcastProcessFunction",
    "BroadcastProcessFunction",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "FilterFunction",
    "FlatMapFunction",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "MapFunction",
    "Partitioner",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "SinkFunction",
    "SourceFunction",
    "TimerService",
    "WindowFunction",
]

__getattr__ = missing_names(
    "flowmagic.datastream.functions",
    {
        "AsyncFunction": ASYNC,
        "AsyncFunctionDescriptor": ASYNC,
        "AsyncRetryPredicate": ASYNC,
        "AsyncRetryStrategy": ASYNC,
    },
    __all__,
)
