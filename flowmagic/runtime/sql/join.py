"""Flink's streaming regular join (``StreamingJoinOperator``): INNER, LEFT, RIGHT and FULL.

Each input's rows are kept per join key in the keyed states ``left-records`` and
``right-records`` (a row with its count and, on an outer side, how many rows of the other side
it joins with). A row that arrives joins the other side's kept rows that satisfy the
condition. On an outer side a row without a match is emitted NULL-padded (``+I``); when its
first match arrives that row is retracted (``-D``) before the joined rows; when its last match
goes it comes back (``+I``). Joined rows carry the input's kind on an inner join's inner side
(``+I``/``+U``, ``-U``/``-D``) and ``+I``/``-D`` where an outer side is involved, as Flink's.

With ``table.exec.state.ttl`` each kept row expires that long (processing time) after it was
last written: added, retracted (its count), or, on an outer side, matched or unmatched (its
association count). An expired row joins nothing; a row of the other side arriving then finds
no match (an outer row comes NULL-padded); a retraction of an expired row is still joined with
the other side's live rows, and an outer row whose matches expired is retracted NULL-padded,
as Flink's operator does (it cannot know what it emitted for rows it forgot).
"""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime_ops import JoinSpec
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.runtime.sql.keys import RowKey
from flowmagic.runtime.sql.operator import DELETE, INSERT, UPDATE_AFTER, SqlOperator, compile_code
from flowmagic.runtime.sql.state_retention import state_retention

__all__ = ["StreamingJoin"]

_LEFT, _RIGHT = 1, 2
#: The states of each side's rows, by Flink's names.
STATE_NAMES = {_LEFT: "left-records", _RIGHT: "right-records"}


@register(OperatorKind.SQL_JOIN)
class StreamingJoin(SqlOperator):
    keyed = True
    tracks_changes = True

    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, JoinSpec)
        self.condition = compile_code(spec.condition, "condition", task)
        self.key_of = {side: RowKey(spec.key_fields[side - 1], spec.key_types[side - 1]) for side in (_LEFT, _RIGHT)}
        join_type = spec.join_type
        self.outer = {_LEFT: join_type in ("left", "full"), _RIGHT: join_type in ("right", "full")}
        self.nulls = {_LEFT: (None,) * spec.widths[0], _RIGHT: (None,) * spec.widths[1]}
        backend = self.keyed_state
        # Per side and key, each row's entry (a TtlValue of it with a retention).
        self.states: dict[int, dict[Any, dict[tuple[Any, ...], Any]]] = {}
        for side, state_name in STATE_NAMES.items():
            backend.declare(state_name, "MAP", "RowData")
            self.states[side] = backend.table(f"map:{state_name}")
        self.retention = state_retention(
            spec.state_ttl_ms, task.clock, backend, [f"map:{name}" for name in STATE_NAMES.values()]
        )

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        try:
            self._process(value, side)
        except Exception as error:
            raise self.fail(error, value) from error

    def _joined(self, row: tuple[Any, ...], other: tuple[Any, ...], row_is_left: bool, kind: int) -> tuple[Any, ...]:
        return (*row, *other, kind) if row_is_left else (*other, *row, kind)

    def _padded(self, row: tuple[Any, ...], row_is_left: bool, kind: int) -> tuple[Any, ...]:
        nulls = self.nulls[_RIGHT if row_is_left else _LEFT]
        return (*row, *nulls, kind) if row_is_left else (*nulls, *row, kind)

    def _process(self, value: Any, side: int) -> None:
        key = self.key_of[side](value)
        self.keyed_state.current_key = key
        other_side = _RIGHT if side == _LEFT else _LEFT
        is_left = side == _LEFT
        input_outer, other_outer = self.outer[side], self.outer[other_side]
        mine = self.states[side].setdefault(key, {})
        others = self.states[other_side].get(key, {})
        retention = self.retention
        if retention is not None:
            retention.live_entries(mine)
            if not retention.live_entries(others):
                self.states[other_side].pop(key, None)
        row, kind = tuple(value[:-1]), value[-1]
        condition = self.condition
        # The other side's matching rows, each copy once, with its entry (count, associations).
        entries = others if retention is None else {other: stored.value for other, stored in others.items()}
        matches = [
            (other, entry)
            for other, entry in entries.items()
            if condition(self._joined(row, other, is_left, INSERT)) is True
            for _ in range(entry[0])
        ]
        collect = self.output.collect
        if kind in (INSERT, UPDATE_AFTER):
            if input_outer and not matches:
                collect(self._padded(row, is_left, INSERT), None)
            for other, entry in matches:
                if other_outer:
                    if entry[1] == 0:
                        collect(self._padded(other, not is_left, DELETE), None)
                    entry[1] += 1
                    if retention is not None:
                        # Flink writes the new association count: the entry's time restarts.
                        others[other] = retention.stamp(entry)
                out_kind = INSERT if (input_outer or other_outer) else kind
                collect(self._joined(row, other, is_left, out_kind), None)
            stored = mine.get(row)
            kept = stored if retention is None or stored is None else stored.value
            if kept is None:
                kept = [1, len(matches)]
            else:
                kept[0] += 1
                kept[1] = len(matches)
            mine[row] = kept if retention is None else retention.stamp(kept)
        else:
            stored = mine.get(row)
            if stored is not None:
                kept = stored if retention is None else stored.value
                kept[0] -= 1
                if kept[0] <= 0:
                    del mine[row]
                elif retention is not None:
                    mine[row] = retention.stamp(kept)
            if not matches and input_outer:
                collect(self._padded(row, is_left, DELETE), None)
            for other, other_entry in matches:
                out_kind = DELETE if input_outer else kind
                collect(self._joined(row, other, is_left, out_kind), None)
                if other_outer:
                    if other_entry[1] == 1:
                        collect(self._padded(other, not is_left, INSERT), None)
                    other_entry[1] -= 1
                    if retention is not None:
                        others[other] = retention.stamp(other_entry)
        if not mine:
            del self.states[side][key]
