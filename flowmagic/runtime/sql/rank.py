"""Flink's streaming Top-N (``Rank`` with ROW_NUMBER), with the strategy the planner picked:
``AppendFastStrategy`` (``AppendOnlyTopNFunction``, an insert-only input) and
``RetractStrategy`` (``RetractableTopNFunction``, an updating input).

Per partition key, rows are kept by sort key (in arrival order among equal sort keys). When a
row enters the top N, the rows it pushes down one rank are updated (``-U`` at the old rank,
``+U`` of the row taking it) and the last one is inserted at its new rank; a row leaving the
top N is deleted (``-D``). Without a rank number in the output (and a range from 1) a row
entering sends ``-D`` of the row it pushes out, then its ``+I``. Only ranks in the range are
emitted. The append-only function keeps no row beyond the top N (state
``data-state-with-append``); the retractable one keeps all (``data-state`` and the sort keys'
counts in ``sorted-map``).

With ``table.exec.state.ttl`` each sort key's rows (and the retractable function's sort keys)
expire that long (processing time) after they were last written; expired rows are forgotten
with their sort keys, so rows ranked below them move up when the next row of the partition comes
(and a retraction of an expired row retracts nothing).
"""

from __future__ import annotations

import bisect
from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.sql_runtime_ops import RankSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.sql.keys import RowKey
from flowmagic.runtime.sql.operator import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, SqlOperator
from flowmagic.runtime.sql.sort import row_order
from flowmagic.runtime.sql.state_retention import state_retention
from flowmagic.runtime.state.state_ttl import TtlValue

__all__ = ["Rank"]

APPEND_STATE = "data-state-with-append"
RETRACT_DATA_STATE = "data-state"
RETRACT_SORTED_STATE = "sorted-map"


class _SortedKeys:
    """A partition's sort keys (tuples of the order fields) in order."""

    def __init__(self, order: tuple[tuple[int, bool, bool], ...]):
        self.wrap = row_order(tuple((i, descending, nulls_last) for i, (_, descending, nulls_last) in enumerate(order)))

    def insert(self, keys: list[Any], key: tuple[Any, ...]) -> None:
        wrapped = [self.wrap(k) for k in keys]
        keys.insert(bisect.bisect_left(wrapped, self.wrap(key)), key)

    def before(self, key: tuple[Any, ...], other: tuple[Any, ...]) -> bool:
        """Whether ``key`` sorts strictly before ``other``."""
        return bool(self.wrap(key) < self.wrap(other))


class Rank(SqlOperator):
    """Streaming Top-N (the ``sql.rank`` kind's streaming implementation, and a streaming
    ``SortLimit``'s)."""

    keyed = True
    tracks_changes = True

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, RankSpec)
        self.key_of = RowKey(spec.key_fields, spec.key_types)
        self.order_fields = tuple(k[0] for k in spec.order)
        self.sorted_keys = _SortedKeys(spec.order)
        self.rank_start, self.rank_end = spec.rank_start, spec.rank_end
        self.output_rank = spec.output_rank
        self.with_number = spec.output_rank or spec.rank_start > 1
        self.retracting = spec.strategy != "AppendFastStrategy"
        backend = self.keyed_state
        if self.retracting:
            backend.declare(RETRACT_DATA_STATE, "MAP", "RowData")
            backend.declare(RETRACT_SORTED_STATE, "VALUE", "SortedMap")
            # Per partition key, rows by sort key, and the sort keys in order (TtlValues of
            # the lists with a retention, between records).
            self.data: dict[Any, dict[tuple[Any, ...], Any]] = backend.table(f"map:{RETRACT_DATA_STATE}")
            self.sorted: dict[Any, Any] = backend.table(f"value:{RETRACT_SORTED_STATE}")
        else:
            backend.declare(APPEND_STATE, "MAP", "RowData")
            self.data = backend.table(f"map:{APPEND_STATE}")
            self.sorted = {}
        tables = [f"map:{RETRACT_DATA_STATE}", f"value:{RETRACT_SORTED_STATE}"] if self.retracting else []
        self.retention = state_retention(spec.state_ttl_ms, task.clock, backend, tables or [f"map:{APPEND_STATE}"])

    # -- output ---------------------------------------------------------------------------

    def _in_range(self, rank: int) -> bool:
        return self.rank_start <= rank <= self.rank_end

    def _emit(self, row: tuple[Any, ...], rank: int | None, kind: int) -> None:
        if rank is not None and not self._in_range(rank):
            return
        out = (*row, rank, kind) if self.output_rank else (*row, kind)
        self.output.collect(out, None)

    # -- records ----------------------------------------------------------------------------

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            key = self.key_of(value)
            self.keyed_state.current_key = key
            row, kind = tuple(value[:-1]), value[-1]
            sort_key = tuple([row[i] for i in self.order_fields])
            written = None if self.retention is None else self._unstamp(key)
            if self.retracting:
                self._retractable(key, row, kind, sort_key)
            else:
                self._append_only(key, row, sort_key)
            if written is not None:
                self._stamp(key, *written)
        except Exception as error:
            raise self.fail(error, value) from error

    # -- state retention ----------------------------------------------------------------------

    def _unstamp(self, key: Any) -> tuple[dict[Any, tuple[int, list[Any]]], tuple[int, list[Any]] | None]:
        """With a retention, the partition's live state made plain for the functions (expired
        sort keys and rows forgotten, with their sort keys); what was there, with when it was
        written, to tell what the record writes."""
        assert self.retention is not None
        live = self.retention.live
        before: dict[Any, tuple[int, list[Any]]] = {}
        stored = self.data.pop(key, None)
        if stored:
            plain = {}
            for sort_key, stamped in self.retention.live_entries(stored).items():
                plain[sort_key] = stamped.value
                before[sort_key] = (stamped.timestamp, list(stamped.value))
            if plain:
                self.data[key] = plain
        sorted_before = None
        stamped_keys: Any = self.sorted.pop(key, None)
        keys = live(stamped_keys)
        if keys is not None:
            data = self.data.get(key, {})
            keys = [k for k in keys if k in data]
            if keys:
                self.sorted[key] = keys
                sorted_before = (stamped_keys.timestamp, list(keys))
        return before, sorted_before

    def _stamp(
        self, key: Any, before: dict[Any, tuple[int, list[Any]]], sorted_before: tuple[int, list[Any]] | None
    ) -> None:
        """The partition's state stamped again: what the record changed (Flink writes it) with
        the time now, the rest with the time it was written."""
        assert self.retention is not None
        now = self.retention.now()
        data = self.data.get(key)
        if data:
            stamped = {}
            for sort_key, rows in data.items():
                old = before.get(sort_key)
                stamped[sort_key] = TtlValue(rows, old[0] if old is not None and old[1] == rows else now)
            self.data[key] = stamped
        keys = self.sorted.get(key)
        if keys:
            unchanged = sorted_before is not None and sorted_before[1] == keys
            self.sorted[key] = TtlValue(keys, sorted_before[0] if sorted_before and unchanged else now)

    def _keys(self, key: Any) -> list[tuple[Any, ...]]:
        """The partition's sort keys in order (the append-only buffer's are its map's keys)."""
        if self.retracting:
            return self.sorted.setdefault(key, [])
        buffer = self.data.get(key, {})
        keys: list[tuple[Any, ...]] = []
        for sort_key in buffer:
            self.sorted_keys.insert(keys, sort_key)
        return keys

    def _append_only(self, key: Any, row: tuple[Any, ...], sort_key: tuple[Any, ...]) -> None:
        buffer = self.data.setdefault(key, {})
        keys = self._keys(key)
        size = sum(len(rows) for rows in buffer.values())
        if keys:
            worst = keys[-1]
            if not self.sorted_keys.before(sort_key, worst) and size >= self.rank_end:
                if not buffer:
                    del self.data[key]
                return
        if sort_key not in buffer:
            self.sorted_keys.insert(keys, sort_key)
        buffer.setdefault(sort_key, []).append(row)
        if self.with_number:
            self._append_with_number(buffer, keys, sort_key, row)
        else:
            self._append_without_number(buffer, keys, row, size + 1)

    def _append_with_number(
        self, buffer: dict[tuple[Any, ...], list[Any]], keys: list[tuple[Any, ...]], sort_key: Any, row: Any
    ) -> None:
        rank, found, current = 0, False, row
        index = 0
        while index < len(keys) and rank <= self.rank_end:
            entry = keys[index]
            rows = buffer[entry]
            index += 1
            if not found and entry == sort_key:
                rank += len(rows)
                found = True
            elif found:
                for previous in list(rows):
                    if rank > self.rank_end:
                        break
                    self._emit(previous, rank, UPDATE_BEFORE)
                    self._emit(current, rank, UPDATE_AFTER)
                    current = previous
                    rank += 1
            else:
                rank += len(rows)
        if rank <= self.rank_end:
            self._emit(current, rank, INSERT)
        for entry in keys[index:]:
            del buffer[entry]

    def _append_without_number(
        self, buffer: dict[tuple[Any, ...], list[Any]], keys: list[tuple[Any, ...]], row: Any, size: int
    ) -> None:
        if size > self.rank_end:
            last_key = keys[-1]
            rows = buffer[last_key]
            last = rows.pop()
            if not rows:
                del buffer[last_key]
            if last == row:
                return
            self._emit(last, None, DELETE)
        self._emit(row, None, INSERT)

    # -- the retractable function -------------------------------------------------------------

    def _retractable(self, key: Any, row: tuple[Any, ...], kind: int, sort_key: tuple[Any, ...]) -> None:
        keys = self._keys(key)
        data = self.data.setdefault(key, {})
        counts = {k: len(data.get(k, ())) for k in keys}
        if kind in (INSERT, UPDATE_AFTER):
            if sort_key not in counts:
                self.sorted_keys.insert(keys, sort_key)
            counts[sort_key] = counts.get(sort_key, 0) + 1
            if self.with_number:
                self._retractable_insert_with_number(data, keys, counts, sort_key, row)
            else:
                self._retractable_insert_without_number(data, keys, counts, sort_key, row)
            data.setdefault(sort_key, []).append(row)
        else:
            if self.with_number:
                removed = self._retract_with_number(data, keys, counts, sort_key, row)
            else:
                removed = self._retract_without_number(data, keys, counts, sort_key, row)
            rows = data.get(sort_key)
            if not removed and rows is not None and row in rows:
                # Beyond the top N: it goes without an update.
                rows.remove(row)
            if sort_key in counts and not data.get(sort_key):
                data.pop(sort_key, None)
                keys.remove(sort_key)
        if not keys:
            self.sorted.pop(key, None)
            self.data.pop(key, None)

    def _retractable_insert_with_number(
        self, data: dict[Any, list[Any]], keys: list[Any], counts: dict[Any, int], sort_key: Any, row: Any
    ) -> None:
        rank, found, current = 0, False, row
        for entry in keys:
            if rank > self.rank_end:
                break
            if not found and entry == sort_key:
                rank += counts[entry]
                found = True
            elif found:
                for previous in data.get(entry, ()):
                    if rank > self.rank_end:
                        break
                    self._emit(previous, rank, UPDATE_BEFORE)
                    self._emit(current, rank, UPDATE_AFTER)
                    current = previous
                    rank += 1
            else:
                rank += counts[entry]
        if rank <= self.rank_end:
            self._emit(current, rank, INSERT)

    def _retractable_insert_without_number(
        self, data: dict[Any, list[Any]], keys: list[Any], counts: dict[Any, int], sort_key: Any, row: Any
    ) -> None:
        rank, found, collect, delete = 0, False, False, None
        for entry in keys:
            if rank > self.rank_end:
                break
            if not found and entry == sort_key:
                rank += counts[entry]
                collect = self._in_range(rank)
                found = True
            elif found:
                last = rank + counts[entry]
                if last <= self.rank_end:
                    rank = last
                else:
                    delete = data[entry][self.rank_end - rank]
                    break
            else:
                rank += counts[entry]
        if delete is not None:
            self._emit(delete, None, DELETE)
        if collect:
            self._emit(row, None, INSERT)

    def _retract_with_number(
        self, data: dict[Any, list[Any]], keys: list[Any], counts: dict[Any, int], sort_key: Any, row: Any
    ) -> bool:
        rank, found = 0, False
        previous: Any = None
        for entry in keys:
            if rank > self.rank_end:
                break
            rows = data.get(entry, [])
            if not found and entry == sort_key:
                index = 0
                while index < len(rows) and rank <= self.rank_end:
                    current = rows[index]
                    if not found and current == row:
                        previous, found = current, True
                        del rows[index]
                    else:
                        if found:
                            self._emit(previous, rank, UPDATE_BEFORE)
                            self._emit(current, rank, UPDATE_AFTER)
                            previous = current
                        index += 1
                    rank += 1
            elif found:
                for current in rows:
                    if rank > self.rank_end:
                        break
                    self._emit(previous, rank, UPDATE_BEFORE)
                    self._emit(current, rank, UPDATE_AFTER)
                    previous = current
                    rank += 1
            else:
                rank += counts[entry]
        if found and rank <= self.rank_end:
            assert previous is not None
            self._emit(previous, rank, DELETE)
        return found

    def _retract_without_number(
        self, data: dict[Any, list[Any]], keys: list[Any], counts: dict[Any, int], sort_key: Any, row: Any
    ) -> bool:
        next_rank, found = 1, False
        for entry in keys:
            if next_rank > self.rank_end:
                break
            rows = data.get(entry, [])
            if not found and entry == sort_key:
                index = 0
                while index < len(rows) and next_rank <= self.rank_end:
                    previous = rows[index]
                    if not found and previous == row:
                        self._emit(previous, None, DELETE)
                        next_rank -= 1
                        found = True
                        del rows[index]
                    else:
                        if found and next_rank == self.rank_end:
                            self._emit(previous, None, INSERT)
                        index += 1
                    next_rank += 1
            elif found:
                last = next_rank + counts[entry] - 1
                if last < self.rank_end:
                    next_rank = last + 1
                else:
                    self._emit(rows[self.rank_end - next_rank], None, INSERT)
                    break
            else:
                next_rank += counts[entry]
        return found
