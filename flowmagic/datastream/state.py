"""PyFlink's ``pyflink.datastream.state``: keyed state descriptors and state."""

from flowmagic.api.pyflink import missing_names
from flowmagic.api.state import (
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ValueState,
    ValueStateDescriptor,
)

__all__ = ["ListState", "ListStateDescriptor", "MapState", "MapStateDescriptor", "ValueState", "ValueStateDescriptor"]

_REDUCE_YOURSELF = "keep a ValueStateDescriptor and combine in your function"

__getattr__ = missing_names(
    "flowmagic.datastream.state",
    {
        "ReducingStateDescriptor": _REDUCE_YOURSELF,
        "ReducingState": _REDUCE_YOURSELF,
        "AggregatingStateDescriptor": _REDUCE_YOURSELF,
        "AggregatingState": _REDUCE_YOURSELF,
        "StateTtlConfig": "state time-to-live is not supported; clear state from a timer",
        "BroadcastState": "broadcast state is not supported",
        "ReadOnlyBroadcastState": "broadcast state is not supported",
        "OperatorStateStore": "operator (non-keyed) state is not supported; use keyed state",
    },
    __all__,
)
