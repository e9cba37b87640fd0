"""The state retention of Flink's SQL operators (``table.exec.state.ttl``).

Flink's planner hands each stateful operator the retention time, and the operator enables
``StateConfigUtil.createTtlConfig(retention)`` on every state it declares: processing time, the
timestamp set when a value (a map's entry) is created or written, never read, and expired values
never returned. A SQL operator here keeps its rows in the keyed backend's tables as
:class:`~flowmagic.runtime.state.state_ttl.TtlValue` (stamped with the task's clock) when a
retention is set, reads them through :meth:`StateRetention.live`, and leaves expired ones out of
snapshots, as Flink's TTL states do.
"""

from __future__ import annotations

from typing import Any

from flowmagic.runtime.clock import Clock
from flowmagic.runtime.state.keyed_state import KeyedStateBackend
from flowmagic.runtime.state.state_ttl import TtlPolicy, TtlValue
from flowmagic.vocabulary.state_ttl import StateTtlConfig
from flowmagic.vocabulary.time import Time

__all__ = ["StateRetention", "state_retention"]


class StateRetention:
    """One operator's retention: stamps values and tells expired ones, on the task's clock."""

    def __init__(self, ttl_ms: int, clock: Clock):
        config = (
            StateTtlConfig.new_builder(Time.milliseconds(ttl_ms))
            .update_ttl_on_create_and_write()
            .never_return_expired()
            .cleanup_full_snapshot()
            .build()
        )
        self.policy = TtlPolicy(config, clock)
        self.ttl = ttl_ms
        self.now = clock.now

    def stamp(self, value: Any) -> TtlValue:
        """``value`` as written now."""
        return TtlValue(value, self.now())

    def live(self, stamped: TtlValue | None) -> Any:
        """The value of ``stamped``; None if there is none or it expired."""
        if stamped is None or stamped.timestamp + self.ttl <= self.now():
            return None
        return stamped.value

    def live_entries(self, entries: dict[Any, TtlValue]) -> dict[Any, TtlValue]:
        """``entries`` (a map state's, per key) without the expired ones, removed in place as
        Flink's TTL map state removes expired entries it reads."""
        expired_before = self.now() - self.ttl
        for entry in [e for e, stamped in entries.items() if stamped.timestamp <= expired_before]:
            del entries[entry]
        return entries


def state_retention(ttl_ms: int, clock: Clock, backend: KeyedStateBackend, tables: list[str]) -> StateRetention | None:
    """The retention of ``ttl_ms`` (None: no retention, state kept for ever), with the
    backend's ``tables`` (holding TtlValues, or dicts of them per key) snapshotted without
    expired values."""
    if ttl_ms <= 0:
        return None
    retention = StateRetention(ttl_ms, clock)
    for table in tables:
        backend.snapshot_filters[table] = retention.policy.live
    return retention
