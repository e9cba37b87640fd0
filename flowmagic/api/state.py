"""State descriptors: name the per-key state a keyed function keeps (``ValueState`` ...).

Get the state in ``open(runtime_context)`` with ``runtime_context.get_state(descriptor)``;
it is scoped to the key of the record being processed, as in Flink.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ListState", "ListStateDescriptor", "MapState", "MapStateDescriptor", "ValueState", "ValueStateDescriptor"]


class ValueState:
    """What ``get_state(ValueStateDescriptor(...))`` returns (the runtime implements it)."""


class ListState:
    """What ``get_list_state(ListStateDescriptor(...))`` returns (the runtime implements it)."""


class MapState:
    """What ``get_map_state(MapStateDescriptor(...))`` returns (the runtime implements it)."""


@dataclass(frozen=True)
class ValueStateDescriptor:
    """One value per key: ``state.value()``, ``state.update(v)``, ``state.clear()``."""

    name: str
    type_info: Any = None


@dataclass(frozen=True)
class ListStateDescriptor:
    """A list per key: ``state.get()``, ``state.add(v)``, ``state.update(values)``, ``state.clear()``."""

    name: str
    type_info: Any = None


@dataclass(frozen=True)
class MapStateDescriptor:
    """A dict per key: ``get/put/contains/remove/keys/values/items/clear``."""

    name: str
    key_type_info: Any = None
    value_type_info: Any = None
