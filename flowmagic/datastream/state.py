"""PyFlink's ``pyflink.datastream.state``: state descriptors, state and time-to-live."""

from flowmagic.api.pyflink import missing_names
from flowmagic.vocabulary.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    BroadcastState,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReadOnlyBroadcastState,
    ReducingState,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueState,
    ValueStateDescriptor,
)
from flowmagic.vocabulary.state_ttl import StateTtlConfig

__all__ = [
    "AggregatingState",
    "AggregatingStateDescriptor",
    "BroadcastState",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "ReadOnlyBroadcastState",
    "ReducingState",
    "ReducingStateDescriptor",
    "StateDescriptor",
    "StateTtlConfig",
    "ValueState",
    "ValueStateDescriptor",
]

__getattr__ = missing_names(
    "flowmagic.datastream.state",
    {
        "OperatorStateStore": (
            "operator (non-keyed) state other than broadcast state is not supported; use keyed state "
            "or stream.broadcast(MapStateDescriptor(...))"
        ),
    },
    __all__,
)
