"""Keyed state with a time-to-live (Flink's ``Ttl*State`` decorators over the heap backend).

Each stored value carries the processing time it was last written (or read, with
``OnReadAndWrite``): a value, a list's element, a map's entry. It is expired once
``timestamp + ttl <= now``. A read that finds an expired value removes it and, unless the
config returns expired values, answers as if there were none. Besides reads, expired values
are removed by incremental cleanup (a few keys of the state per access, and per record if
asked; 5 per access by default) and left out of snapshots with ``cleanup_full_snapshot``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from flowmagic.runtime.clock import Clock
from flowmagic.runtime.state.keyed_state import (
    AggregatingState,
    KeyedStateBackend,
    ListState,
    MapState,
    ReducingState,
    ValueState,
)
from flowmagic.vocabulary.state_ttl import StateTtlConfig

__all__ = [
    "TtlAggregatingState",
    "TtlListState",
    "TtlMapState",
    "TtlPolicy",
    "TtlReducingState",
    "TtlValue",
    "TtlValueState",
]


class TtlValue:
    """A stored value and the processing time (ms) it was last written or read."""

    __slots__ = ("timestamp", "value")

    def __init__(self, value: Any, timestamp: int):
        self.value = value
        self.timestamp = timestamp

    def __reduce__(self) -> tuple[Any, ...]:
        return (TtlValue, (self.value, self.timestamp))

    def __repr__(self) -> str:
        return f"TtlValue({self.value!r}, {self.timestamp})"


class TtlPolicy:
    """One state's TTL settings, read against the task's clock."""

    def __init__(self, config: StateTtlConfig, clock: Clock):
        self.ttl = config.get_ttl().to_milliseconds()
        self.update_on_read = config.get_update_type() is StateTtlConfig.UpdateType.OnReadAndWrite
        self.return_expired = (
            config.get_state_visibility() is StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp
        )
        self.clock = clock
        strategies = config.get_cleanup_strategies()
        self.in_full_snapshot = strategies.in_full_snapshot()
        incremental = strategies.get_incremental_cleanup_strategy()
        self.cleanup_size = 0 if incremental is None else incremental.get_cleanup_size()
        self.cleanup_every_record = incremental is not None and incremental.run_cleanup_for_every_record()

    def wrap(self, value: Any) -> TtlValue:
        return TtlValue(value, self.clock.now())

    def expired(self, stamped: TtlValue) -> bool:
        return stamped.timestamp + self.ttl <= self.clock.now()

    def unexpired(self, stamped: TtlValue | None) -> Any:
        """The value, or None if there is none or it expired and expired values are hidden."""
        if stamped is None or (not self.return_expired and self.expired(stamped)):
            return None
        return stamped.value

    def live(self, stored: Any) -> Any:
        """What of a stored row has not expired (None: nothing), whatever the state's kind:
        a TtlValue, a list of them or a dict of them."""
        if isinstance(stored, TtlValue):
            return None if self.expired(stored) else stored
        if isinstance(stored, list):
            kept = [element for element in stored if not self.expired(element)]
            return kept or None
        if isinstance(stored, dict):
            entries = {key: entry for key, entry in stored.items() if not self.expired(entry)}
            return entries or None
        return stored


class _Cleanup:
    """Flink's incremental cleanup of the heap backend: a cursor going round a state's keys,
    a few at a time, removing what expired."""

    def __init__(self, backend: KeyedStateBackend, table: dict[Any, Any], policy: TtlPolicy):
        self._backend = backend
        self._table = table
        self._policy = policy
        self._cursor: Iterator[Any] = iter(())

    def step(self) -> None:
        for _ in range(self._policy.cleanup_size):
            key = next(self._cursor, _END)
            if key is _END:
                # A new round over the keys there are now; an empty state ends the step.
                self._cursor = iter(list(self._table))
                key = next(self._cursor, _END)
                if key is _END:
                    return
            stored = self._table.get(key)
            if stored is None:
                continue
            live = self._policy.live(stored)
            if live is None:
                del self._table[key]
                self._backend.mark_changed(key)
            elif live is not stored and _size(live) != _size(stored):
                self._table[key] = live
                self._backend.mark_changed(key)


_END = object()


def _size(stored: Any) -> int:
    return len(stored) if isinstance(stored, (list, dict)) else 1


class _Ttl:
    """What every TTL state does around its accesses: incremental cleanup, and what its
    table registers with the backend."""

    _table: dict[Any, Any]
    _backend: KeyedStateBackend

    def _setup_ttl(self, name: str, policy: TtlPolicy) -> None:
        self._policy = policy
        self._cleanup: Callable[[], None] | None = None
        if policy.cleanup_size:
            self._cleanup = _Cleanup(self._backend, self._table, policy).step
            if policy.cleanup_every_record:
                # One per table, however often the function gets the state.
                self._backend.per_record[name] = self._cleanup
        if policy.in_full_snapshot:
            self._backend.snapshot_filters[name] = policy.live

    def _accessed(self) -> None:
        if self._cleanup is not None:
            self._cleanup()

    def _get_stamped(self) -> Any:
        """Flink's ``getWrappedWithTtlCheckAndUpdate``: the key's value (None if none, or
        expired and hidden); an expired one is removed, a live one renewed if reads renew."""
        self._accessed()
        key = self._backend.current_key
        stamped = self._table.get(key)
        if stamped is None:
            return None
        if self._policy.expired(stamped):
            del self._table[key]
            return stamped.value if self._policy.return_expired else None
        if self._policy.update_on_read:
            self._table[key] = self._policy.wrap(stamped.value)
        return stamped.value


class TtlValueState(_Ttl, ValueState):
    def __init__(self, backend: KeyedStateBackend, name: str, policy: TtlPolicy):
        super().__init__(backend, name)
        self._setup_ttl(name, policy)

    def value(self) -> Any:
        return self._get_stamped()

    def update(self, value: Any) -> None:
        self._accessed()
        if value is None:
            # Flink: updating a value state to null clears it.
            self.clear()
            return
        self._table[self._backend.current_key] = self._policy.wrap(value)


class TtlReducingState(_Ttl, ReducingState):
    def __init__(self, backend: KeyedStateBackend, name: str, reduce: Callable[[Any, Any], Any], policy: TtlPolicy):
        super().__init__(backend, name, reduce)
        self._setup_ttl(name, policy)

    def get(self) -> Any:
        return self._get_stamped()

    def add(self, value: Any) -> None:
        self._accessed()
        key = self._backend.current_key
        current = self._policy.unexpired(self._table.get(key))
        self._table[key] = self._policy.wrap(value if current is None else self._reduce(current, value))


class TtlAggregatingState(_Ttl, AggregatingState):
    def __init__(self, backend: KeyedStateBackend, name: str, function: Any, policy: TtlPolicy):
        super().__init__(backend, name, function)
        self._setup_ttl(name, policy)

    def get(self) -> Any:
        accumulator = self._get_stamped()
        return None if accumulator is None else self._function.get_result(accumulator)

    def add(self, value: Any) -> None:
        self._accessed()
        key = self._backend.current_key
        accumulator = self._policy.unexpired(self._table.get(key))
        if accumulator is None:
            accumulator = self._function.create_accumulator()
        self._table[key] = self._policy.wrap(self._function.add(value, accumulator))


class TtlListState(_Ttl, ListState):
    """Every element expires on its own."""

    def __init__(self, backend: KeyedStateBackend, name: str, policy: TtlPolicy):
        super().__init__(backend, name)
        self._setup_ttl(name, policy)

    def get(self) -> list[Any]:
        self._accessed()
        key = self._backend.current_key
        stored: list[TtlValue] = self._table.get(key, [])
        live = [element for element in stored if not self._policy.expired(element)]
        shown = stored if self._policy.return_expired else live
        values = [element.value for element in shown]
        if self._policy.update_on_read:
            live = [self._policy.wrap(element.value) for element in live]
        if live:
            self._table[key] = live
        else:
            self._table.pop(key, None)
        return values

    def add(self, value: Any) -> None:
        self._accessed()
        self._table.setdefault(self._backend.current_key, []).append(self._policy.wrap(value))

    def add_all(self, values: list[Any]) -> None:
        self._accessed()
        self._table.setdefault(self._backend.current_key, []).extend(self._policy.wrap(value) for value in values)

    def update(self, values: list[Any]) -> None:
        self._accessed()
        self._table[self._backend.current_key] = [self._policy.wrap(value) for value in values]


class TtlMapState(_Ttl, MapState):
    """Every entry expires on its own."""

    def __init__(self, backend: KeyedStateBackend, name: str, policy: TtlPolicy):
        super().__init__(backend, name)
        self._setup_ttl(name, policy)

    def _entry(self, key: Any) -> Any:
        self._accessed()
        entries = self._table.get(self._backend.current_key)
        if not entries or key not in entries:
            return None
        stamped = entries[key]
        if self._policy.expired(stamped):
            del entries[key]
            return stamped.value if self._policy.return_expired else None
        if self._policy.update_on_read:
            entries[key] = self._policy.wrap(stamped.value)
        return stamped.value

    def _live_items(self) -> list[tuple[Any, Any]]:
        self._accessed()
        entries = self._table.get(self._backend.current_key)
        if not entries:
            return []
        shown = []
        for key, stamped in list(entries.items()):
            if self._policy.expired(stamped):
                del entries[key]
                if not self._policy.return_expired:
                    continue
            elif self._policy.update_on_read:
                entries[key] = self._policy.wrap(stamped.value)
            shown.append((key, stamped.value))
        return shown

    def get(self, key: Any) -> Any:
        return self._entry(key)

    def put(self, key: Any, value: Any) -> None:
        self._accessed()
        self._map()[key] = self._policy.wrap(value)

    def put_all(self, mapping: dict[Any, Any]) -> None:
        self._accessed()
        self._map().update((key, self._policy.wrap(value)) for key, value in mapping.items())

    def remove(self, key: Any) -> None:
        self._accessed()
        self._map().pop(key, None)

    def contains(self, key: Any) -> bool:
        return self._entry(key) is not None

    def keys(self) -> list[Any]:
        return [key for key, _value in self._live_items()]

    def values(self) -> list[Any]:
        return [value for _key, value in self._live_items()]

    def items(self) -> list[tuple[Any, Any]]:
        return self._live_items()

    def is_empty(self) -> bool:
        return not self._live_items()
