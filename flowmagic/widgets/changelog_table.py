"""A SQL result's changelog, materialized as the table it describes: the model of the cell's
live result view, plain data without any display.

Rows arrive with their kind (``+I``, ``-U``, ``+U``, ``-D``). The table applies them as Flink's
SQL client's table mode does: an insert or update-after adds a row, an update-before or delete
removes one. Rows are identified by the query's upsert key (the grouping keys of an aggregate)
when it has one, else by all their fields, and an update changes its row where it stands:
the ``-U`` frees the row's place and the ``+U`` that follows takes it, so a count going up
stays on its line instead of moving to the end.

Large results stay cheap: the table keeps at most ``max_rows`` rows (evicting the oldest, as
the SQL client's ``sql-client.execution.max-table-result.rows`` does) and the changelog only
the newest ``keep`` rows, while totals count everything received.
"""

from __future__ import annotations

from collections import Counter, OrderedDict, deque
from collections.abc import Hashable, Sequence
from typing import NamedTuple

__all__ = ["ADDS", "KINDS", "Change", "ChangelogTable"]

#: Flink's row kinds, in the order they are counted and shown.
KINDS = ("+I", "-U", "+U", "-D")
#: The kinds that add a row to the table; the others remove one.
ADDS = ("+I", "+U")


class Change(NamedTuple):
    """One row of the changelog: its number (from 1, in arrival order), kind and fields."""

    number: int
    kind: str
    values: tuple[object, ...]


class ChangelogTable:
    """The table a changelog describes, its newest changes and its totals.

    ``key``: the positions of the fields that identify a row (the upsert key); None: the whole
    row. ``keep``: how many of the newest changes :attr:`changes` holds. ``max_rows``: how many
    rows the table holds before it evicts the oldest.
    """

    def __init__(
        self,
        columns: Sequence[str],
        key: Sequence[int] | None = None,
        *,
        keep: int = 1000,
        max_rows: int = 100_000,
    ):
        if keep < 1 or max_rows < 1:
            raise ValueError(f"keep and max_rows must be positive, got keep={keep}, max_rows={max_rows}.")
        self.columns = tuple(columns)
        self.key = tuple(key) if key is not None else None
        self.max_rows = max_rows
        #: The newest changes, oldest first.
        self.changes: deque[Change] = deque(maxlen=keep)
        #: How many changes of each kind arrived.
        self.totals: Counter[str] = Counter()
        #: How many changes arrived in all.
        self.received = 0
        #: Rows evicted to keep the table within ``max_rows``.
        self.evicted = 0
        #: Changes that removed a row the table did not hold (evicted, or never inserted).
        self.unmatched = 0
        # Slot number -> row, in the order rows took their places; None while a row's -U waits
        # for its +U (the place is kept, the row not shown).
        self._slots: OrderedDict[int, tuple[object, ...] | None] = OrderedDict()
        # Identity (upsert key or whole row) -> the slots of rows with it (several for duplicates).
        self._where: dict[Hashable, list[int]] = {}
        # Places freed by a -U, for the +U after it: by upsert key, or in order without a key.
        self._freed: dict[Hashable, int] = {}
        self._freed_any: deque[int] = deque()
        self._waiting = 0
        # Slot -> the number of the change that last touched it, most recent last.
        self._touched: OrderedDict[int, int] = OrderedDict()
        self._next_slot = 0

    def __len__(self) -> int:
        """How many rows the table holds."""
        return len(self._slots) - self._waiting

    def _identity(self, values: tuple[object, ...]) -> Hashable:
        if self.key is None:
            return values
        return tuple(values[i] for i in self.key)

    def apply(self, kind: str, values: Sequence[object]) -> None:
        """Apply one change of ``kind`` (``+I``, ``-U``, ``+U`` or ``-D``) to the table."""
        if kind not in KINDS:
            raise ValueError(f"Unknown row kind {kind!r}: expected one of {', '.join(KINDS)}.")
        row = tuple(values)
        self.totals[kind] += 1
        self.received += 1
        number = self.received
        self.changes.append(Change(number, kind, row))
        identity = self._identity(row)
        if kind in ADDS:
            self._add(kind, identity, row, number)
        else:
            self._remove(kind, identity, number)

    def _waiting_slot(self, kind: str, identity: Hashable) -> int | None:
        """The place a -U freed for this +U, if it is still kept."""
        if kind != "+U":
            return None
        if self.key is not None:
            slot = self._freed.pop(identity, None)
            return slot if slot is not None and slot in self._slots and self._slots[slot] is None else None
        while self._freed_any:
            slot = self._freed_any.popleft()
            if slot in self._slots and self._slots[slot] is None:
                return slot
        return None

    def _add(self, kind: str, identity: Hashable, row: tuple[object, ...], number: int) -> None:
        slot = self._waiting_slot(kind, identity)
        if slot is not None:
            self._waiting -= 1
            self._slots[slot] = row
            self._where.setdefault(identity, []).append(slot)
        elif self.key is not None and identity in self._where:
            # An upsert (+U without -U, or +I of a key the table holds): the row changes in place.
            slot = self._where[identity][0]
            self._slots[slot] = row
        else:
            slot = self._next_slot
            self._next_slot += 1
            self._slots[slot] = row
            self._where.setdefault(identity, []).append(slot)
            self._evict()
        self._touch(slot, number)

    def _remove(self, kind: str, identity: Hashable, number: int) -> None:
        slots = self._where.get(identity)
        if not slots:
            self.unmatched += 1
            return
        slot = slots.pop()
        if not slots:
            del self._where[identity]
        if kind == "-D":
            del self._slots[slot]
            self._touched.pop(slot, None)
            return
        # The row's place waits for the +U that follows.
        self._slots[slot] = None
        self._waiting += 1
        if self.key is not None:
            self._freed[identity] = slot
        else:
            self._freed_any.append(slot)
        self._touched.pop(slot, None)

    def _touch(self, slot: int, number: int) -> None:
        self._touched[slot] = number
        self._touched.move_to_end(slot)

    def _evict(self) -> None:
        while len(self._slots) > self.max_rows:
            slot, row = self._slots.popitem(last=False)
            self._touched.pop(slot, None)
            if row is None:
                self._waiting -= 1
                continue
            identity = self._identity(row)
            slots = self._where[identity]
            slots.remove(slot)
            if not slots:
                del self._where[identity]
            self.evicted += 1

    def rows(self) -> list[tuple[object, ...]]:
        """The table now, rows in the order they took their places."""
        return [row for row in self._slots.values() if row is not None]

    def recent_rows(self, limit: int) -> list[tuple[int, tuple[object, ...]]]:
        """At most ``limit`` rows, those changed most recently, in table order, each with the
        number of the change that last touched it."""
        shown: list[int] = []
        for slot in reversed(self._touched):
            if len(shown) == limit:
                break
            shown.append(slot)
        shown.sort()
        rows = []
        for slot in shown:
            row = self._slots[slot]
            assert row is not None
            rows.append((self._touched[slot], row))
        return rows
