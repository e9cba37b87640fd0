"""State descriptors: name the state a function keeps (``ValueState`` ...), as PyFlink's.

Get keyed state in ``open(runtime_context)`` with ``runtime_context.get_state(descriptor)``
(``get_list_state``, ``get_map_state``, ``get_reducing_state``, ``get_aggregating_state``);
it is scoped to the key of the record being processed, as in Flink. A
``MapStateDescriptor`` also names a broadcast state (``stream.broadcast(descriptor)``).
``descriptor.enable_time_to_live(StateTtlConfig...)`` makes keyed state expire.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmagic.errors import InvalidArgumentError, InvalidTypeError
from flowmagic.vocabulary.functions import AggregateFunction, ReduceFunction
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
    "ValueState",
    "ValueStateDescriptor",
]


class ValueState:
    """What ``get_state(ValueStateDescriptor(...))`` returns (the runtime implements it)."""


class ListState:
    """What ``get_list_state(ListStateDescriptor(...))`` returns (the runtime implements it)."""


class MapState:
    """What ``get_map_state(MapStateDescriptor(...))`` returns (the runtime implements it)."""


class ReducingState:
    """What ``get_reducing_state(ReducingStateDescriptor(...))`` returns: ``get()``, ``add(v)``
    (combined with the reduce function), ``clear()``."""


class AggregatingState:
    """What ``get_aggregating_state(AggregatingStateDescriptor(...))`` returns: ``get()`` (the
    aggregate function's result), ``add(v)``, ``clear()``."""


class ReadOnlyBroadcastState:
    """A broadcast state as the non-broadcast side sees it: ``get/contains/items/keys/values/
    is_empty`` (the runtime implements it)."""


class BroadcastState(ReadOnlyBroadcastState):
    """A broadcast state as the broadcast side sees it: also ``put/put_all/remove/clear``."""


class StateDescriptor:
    """Names a state and the type of its values (PyFlink's ``StateDescriptor``)."""

    def __init__(self, name: str, type_info: Any = None):
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError(f"A state descriptor needs a non-empty str name, got {name!r}.")
        self.name = name
        self.type_info = type_info
        self._ttl_config: StateTtlConfig | None = None

    def get_name(self) -> str:
        """The name of the state."""
        return self.name

    def enable_time_to_live(self, ttl_config: StateTtlConfig) -> None:
        """Let the state's values expire as ``ttl_config`` says (keyed state only, as in Flink)."""
        if not isinstance(ttl_config, StateTtlConfig):
            raise InvalidTypeError(f"enable_time_to_live() expects a StateTtlConfig, got {ttl_config!r}.")
        self._ttl_config = ttl_config

    @property
    def ttl_config(self) -> StateTtlConfig | None:
        """The time-to-live set with :meth:`enable_time_to_live` (None: the state never expires)."""
        return self._ttl_config

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class ValueStateDescriptor(StateDescriptor):
    """One value per key: ``state.value()``, ``state.update(v)``, ``state.clear()``."""

    def __init__(self, name: str, value_type_info: Any = None):
        super().__init__(name, value_type_info)


class ListStateDescriptor(StateDescriptor):
    """A list per key: ``state.get()``, ``state.add(v)``, ``state.update(values)``, ``state.clear()``."""

    def __init__(self, name: str, elem_type_info: Any = None):
        super().__init__(name, elem_type_info)


class MapStateDescriptor(StateDescriptor):
    """A dict per key: ``get/put/contains/remove/keys/values/items/clear``; or, given to
    ``stream.broadcast(...)``, a broadcast state."""

    def __init__(self, name: str, key_type_info: Any = None, value_type_info: Any = None):
        super().__init__(name, None)
        self.key_type_info = key_type_info
        self.value_type_info = value_type_info


class ReducingStateDescriptor(StateDescriptor):
    """One value per key, ``reduce_function(old, new)`` combining what ``add(v)`` adds."""

    def __init__(self, name: str, reduce_function: ReduceFunction | Callable[[Any, Any], Any], type_info: Any = None):
        super().__init__(name, type_info)
        if isinstance(reduce_function, ReduceFunction):
            self._reduce_function: Callable[[Any, Any], Any] = reduce_function.reduce
        elif callable(reduce_function):
            self._reduce_function = reduce_function
        else:
            raise InvalidTypeError("The input must be a ReduceFunction or a callable function!")

    def get_reduce_function(self) -> Callable[[Any, Any], Any]:
        return self._reduce_function


class AggregatingStateDescriptor(StateDescriptor):
    """An accumulator per key of ``agg_function`` (an AggregateFunction): ``add(v)`` adds to
    it, ``get()`` is its result. ``state_type_info`` is the accumulator's type."""

    def __init__(self, name: str, agg_function: AggregateFunction, state_type_info: Any = None):
        super().__init__(name, state_type_info)
        if not isinstance(agg_function, AggregateFunction):
            raise InvalidTypeError("The input must be a pyflink.datastream.functions.AggregateFunction!")
        self._agg_function = agg_function

    def get_agg_function(self) -> AggregateFunction:
        return self._agg_function
