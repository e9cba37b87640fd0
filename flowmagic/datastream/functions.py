"""PyFlink's ``pyflink.datastream.functions``: the user function classes."""

from flowmagic.api.broadcast import (
    BaseBroadcastProcessFunction,
    BroadcastProcessFunction,
    KeyedBroadcastProcessFunction,
)
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
from flowmagic.api.pyflink import ASYNC, SOURCES, missing_names

__all__ = [
    "AggregateFunction",
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
    "TimerService",
    "WindowFunction",
]

__getattr__ = missing_names(
    "flowmagic.datastream.functions",
    {
        "AsyncFunction": ASYNC,
        "SourceFunction": SOURCES,
        "AllWindowFunction": "use ProcessAllWindowFunction with window_all(...).process(...)",
    },
    __all__,
)
