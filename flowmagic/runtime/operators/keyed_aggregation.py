"""Rolling keyed reductions: ``reduce``, ``sum``, ``min``, ``max``, ``min_by``, ``max_by``.

A :class:`KeyedFolder` holds the per-key state; the same folders pre-aggregate BATCH
exchanges (see :mod:`flowmagic.runtime.exchange`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from flowmagic.graph.operator_params import Aggregation, KeyedAggregationParams, KeyedReduceParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.failures import check_field_reference
from flowmagic.runtime.operators.context import adapt
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.registry import register
from flowmagic.vocabulary.types import Row

__all__ = [
    "FoldError",
    "KeyedFolder",
    "KeyedReduceOperator",
    "ReduceFolder",
    "SumFolder",
    "SumUpdater",
    "aggregation_function",
    "field_of",
    "keyed_folder",
    "with_field",
]


def field_of(value: Any, position: Any) -> Any:
    """Field ``position`` of a record: tuple/list index, dict key, Row index or name, or the
    value itself at 0."""
    if isinstance(value, (tuple, list, dict, Row)):
        return value[position]
    if position != 0:
        raise IndexError(f"field {position} of a scalar record {value!r}; only position 0 exists")
    return value


def with_field(value: Any, position: Any, new: Any) -> Any:
    """A copy of ``value`` with field ``position`` replaced."""
    if isinstance(value, tuple):
        return (*value[:position], new, *value[position + 1 :])
    if isinstance(value, (list, dict, Row)):
        copied = copy.copy(value)
        copied[position] = new
        return copied
    return new


def aggregation_function(aggregation: Aggregation, position: int | str) -> Callable[[Any, Any], Any]:
    """Flink's SumAggregator / ComparableAggregator as a reduce function ``(acc, value)``."""
    folder = _Aggregation(aggregation, position)

    def reduce(accumulated: Any, value: Any) -> Any:
        return folder.record(folder.combine(folder.start(accumulated), value))

    return reduce


class _Aggregation:
    """sum/min/max keep the key's first record and fold one field; min_by/max_by keep a record.

    State is ``[first record, folded field]`` or, for the ``_by`` kinds, the record itself,
    so folding never copies a record (the hot loop of keyed aggregations).
    """

    def __init__(self, aggregation: Aggregation, position: int | str):
        self.aggregation = aggregation
        self.position = position
        self.by = aggregation in (Aggregation.MIN_BY, Aggregation.MAX_BY)

    def start(self, value: Any) -> Any:
        return value if self.by else [value, field_of(value, self.position)]

    def combine(self, state: Any, value: Any) -> Any:
        field = field_of(value, self.position)
        aggregation = self.aggregation
        if aggregation == "sum":
            state[1] += field
        elif aggregation == "min":
            if field < state[1]:
                state[1] = field
        elif aggregation == "max":
            if field > state[1]:
                state[1] = field
        elif aggregation == "min_by":
            if field < field_of(state, self.position):
                return value
        elif field > field_of(state, self.position):
            return value
        return state

    def record(self, state: Any) -> Any:
        return state if self.by else with_field(state[0], self.position, state[1])


class KeyedFolder:
    """Per-key rolling state of a keyed reduce or aggregation (see :func:`keyed_folder`).

    Subclasses define :meth:`fold` and :meth:`results`; the batch methods fold value by
    value unless a subclass has a faster loop.
    """

    #: When a set, the folds add the keys whose state they changed (incremental snapshots).
    touched: set[Any] | None = None

    def __init__(self, params: KeyedReduceParams | KeyedAggregationParams):
        self.key_of = adapt(params.key_selector, "get_key")

    def fold(self, value: Any) -> Any:
        """Fold ``value`` into its key's state; return the key's current result."""
        raise NotImplementedError

    def fold_batch(self, values: list[Any]) -> None:
        """Fold every value (BATCH: only the final results are wanted)."""
        fold = self.fold
        value = None
        try:
            for value in values:
                fold(value)
        except Exception as error:
            raise FoldError(value) from error

    def fold_all(self, values: list[Any]) -> list[Any]:
        """Fold every value; return the key's result after each one (STREAMING updates)."""
        fold = self.fold
        results = []
        value = None
        try:
            for value in values:
                results.append(fold(value))
        except Exception as error:
            raise FoldError(value) from error
        return results

    def results(self) -> list[Any]:
        """Every key's result, keys in the order they first came."""
        raise NotImplementedError

    def snapshot(self, keys: Iterable[Any] | None = None) -> dict[Any, Any]:
        """Every key's state, or the state of ``keys`` (what a checkpoint stores)."""
        raise NotImplementedError

    def restore(self, states: dict[Any, Any]) -> None:
        """Take over the keys' states of :meth:`snapshot`."""
        raise NotImplementedError


class ReduceFolder(KeyedFolder):
    """A reduce function, or min/max/min_by/max_by: one state per key."""

    def __init__(self, params: KeyedReduceParams | KeyedAggregationParams):
        super().__init__(params)
        self.states: dict[Any, Any] = {}
        self.start: Callable[[Any], Any]
        self.combine: Callable[[Any, Any], Any]
        self.record: Callable[[Any], Any]
        if isinstance(params, KeyedAggregationParams):
            aggregation = _Aggregation(params.aggregation, params.position)
            self.start, self.combine, self.record = aggregation.start, aggregation.combine, aggregation.record
        else:
            self.combine = adapt(params.function, "reduce")
            self.start = self.record = _identity

    def fold(self, value: Any) -> Any:
        key = self.key_of(value)
        states = self.states
        state = states.get(key, _MISSING)
        state = self.start(value) if state is _MISSING else self.combine(state, value)
        states[key] = state
        if self.touched is not None:
            self.touched.add(key)
        return self.record(state)

    def fold_batch(self, values: list[Any]) -> None:
        # Without fold()'s record(state) per value: BATCH only wants the final results.
        key_of, states, start, combine = self.key_of, self.states, self.start, self.combine
        value = None
        try:
            for value in values:
                key = key_of(value)
                state = states.get(key, _MISSING)
                states[key] = start(value) if state is _MISSING else combine(state, value)
        except Exception as error:
            raise FoldError(value) from error

    def results(self) -> list[Any]:
        record = self.record
        return [record(state) for state in self.states.values()]

    def snapshot(self, keys: Iterable[Any] | None = None) -> dict[Any, Any]:
        return _of_keys(self.states, keys)

    def restore(self, states: dict[Any, Any]) -> None:
        self.states.update(states)


class SumFolder(KeyedFolder):
    """``sum(position)`` in BATCH: the key's first record and its running total, in two dicts.

    The hot loop of a WordCount is then one lookup, one store and one addition per record,
    with no per-key state object to reach through.
    """

    def __init__(self, params: KeyedAggregationParams):
        super().__init__(params)
        self.position = params.position
        self.totals: dict[Any, Any] = {}
        self.firsts: dict[Any, Any] = {}

    def fold(self, value: Any) -> Any:
        key = self.key_of(value)
        field = field_of(value, self.position)
        total = self.totals.get(key, _MISSING)
        if total is _MISSING:
            self.firsts[key] = value
            total = field
        else:
            total = total + field
        self.totals[key] = total
        return with_field(self.firsts[key], self.position, total)

    def fold_batch(self, values: list[Any]) -> None:
        if not values or not isinstance(values[0], (tuple, list, dict)):
            super().fold_batch(values)
            return
        key_of, totals, firsts, position = self.key_of, self.totals, self.firsts, self.position
        value = None
        try:
            for value in values:
                key = key_of(value)
                total = totals.get(key, _MISSING)
                if total is _MISSING:
                    firsts[key] = value
                    totals[key] = value[position]
                else:
                    totals[key] = total + value[position]
        except Exception as error:
            raise FoldError(value) from error

    def results(self) -> list[Any]:
        firsts, position = self.firsts, self.position
        return [with_field(firsts[key], position, total) for key, total in self.totals.items()]

    def snapshot(self, keys: Iterable[Any] | None = None) -> dict[Any, Any]:
        return {key: (self.firsts[key], total) for key, total in _of_keys(self.totals, keys).items()}

    def restore(self, states: dict[Any, Any]) -> None:
        for key, (first, total) in states.items():
            self.firsts[key], self.totals[key] = first, total


class SumUpdater(KeyedFolder):
    """``sum(position)`` in STREAMING: as in Flink, a key's state is its latest result, the
    first record with the running total in its field, and each record makes the next one."""

    def __init__(self, params: KeyedAggregationParams):
        super().__init__(params)
        self.position = params.position
        self.latest: dict[Any, Any] = {}

    def fold(self, value: Any) -> Any:
        key = self.key_of(value)
        previous = self.latest.get(key, _MISSING)
        if previous is not _MISSING:
            position = self.position
            value = with_field(previous, position, field_of(previous, position) + field_of(value, position))
        self.latest[key] = value
        if self.touched is not None:
            self.touched.add(key)
        return value

    def fold_all(self, values: list[Any]) -> list[Any]:
        position = self.position
        if not values or not isinstance(values[0], tuple) or not isinstance(position, int):
            return super().fold_all(values)
        key_of, latest, get = self.key_of, self.latest, self.latest.get
        touch = None if self.touched is None else self.touched.add
        after = position + 1
        # Pairs summing their second field (Tuple2 word counts) get a record built directly.
        pairs = position == 1
        results: list[Any] = []
        append = results.append
        value = None
        try:
            for value in values:
                key = key_of(value)
                if touch is not None:
                    touch(key)
                previous = get(key)  # a tuple, never None, once the key has a record
                if previous is None:
                    latest[key] = value
                    append(value)
                else:
                    total = previous[position] + value[position]
                    if pairs and len(previous) == 2:
                        record = latest[key] = (previous[0], total)
                    else:
                        record = latest[key] = (*previous[:position], total, *previous[after:])
                    append(record)
        except Exception as error:
            raise FoldError(value) from error
        return results

    def results(self) -> list[Any]:
        return list(self.latest.values())

    def snapshot(self, keys: Iterable[Any] | None = None) -> dict[Any, Any]:
        return _of_keys(self.latest, keys)

    def restore(self, states: dict[Any, Any]) -> None:
        self.latest.update(states)


def keyed_folder(params: KeyedReduceParams | KeyedAggregationParams, updates: bool) -> KeyedFolder:
    """The folder of a keyed reduce or aggregation operator's ``params``; ``updates`` when
    every record's new result is wanted (STREAMING), not only the final ones (BATCH)."""
    if not isinstance(params, KeyedAggregationParams) or params.aggregation is not Aggregation.SUM:
        return ReduceFolder(params)
    return SumUpdater(params) if updates else SumFolder(params)


_MISSING = object()


def _of_keys(states: dict[Any, Any], keys: Iterable[Any] | None) -> dict[Any, Any]:
    if keys is None:
        return dict(states)
    return {key: states[key] for key in keys if key in states}


class FoldError(Exception):
    """Carries the record a fold failed on (its cause is the user's exception)."""

    def __init__(self, record: Any):
        super().__init__("fold failed")
        self.record = record

    @property
    def cause(self) -> BaseException:
        """The user's exception (``raise FoldError(record) from error`` sets it)."""
        assert self.__cause__ is not None, "a FoldError is raised from the user's exception"
        return self.__cause__


def _identity(value: Any) -> Any:
    return value


@register(OperatorKind.KEYED_REDUCE, OperatorKind.KEYED_AGGREGATION)
class KeyedReduceOperator(Operator):
    """Rolling reduce per key: STREAMING emits every update, BATCH only the final value."""

    keyed = True
    combinable = True
    tracks_changes = True

    def __init__(self, name: str, params: KeyedReduceParams | KeyedAggregationParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.folder = keyed_folder(params, updates=not task.batch)
        self.position: int | str | None = None
        if isinstance(params, KeyedAggregationParams):
            self.position = params.position
        else:
            self.user_functions = (params.function,)
        # Aggregations check their field on the first record (Flink checks the type).
        self.unchecked = self.position is not None

    def _check_first(self, value: Any) -> None:
        self.unchecked = False
        assert self.position is not None, "only aggregations check their field"
        try:
            check_field_reference(value, self.position)
        except Exception as error:
            raise self.fail(error, value) from error

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        if self.unchecked:
            self._check_first(value)
        try:
            result = self.folder.fold(value)
        except Exception as error:
            raise self.fail(error, value) from error
        if not self.task.batch:
            self.output.collect(result, timestamp)

    def process_batch(self, values: list[Any]) -> None:
        if self.unchecked and values:
            self._check_first(values[0])
        try:
            if self.task.batch:
                self.folder.fold_batch(values)
                return
            results = self.folder.fold_all(values)
        except FoldError as wrapped:
            raise self.fail(wrapped.cause, wrapped.record) from wrapped.cause
        self.output.collect_batch(results)

    def end_input(self) -> None:
        if self.task.batch:
            self.output.collect_batch(self.folder.results())

    def track_changes(self) -> bool:
        tracked = super().track_changes()
        self.folder.touched = self.changed_keys
        return tracked

    def snapshot_keyed(self, keys: Iterable[Any] | None = None) -> dict[Any, dict[str, Any]]:
        entries = super().snapshot_keyed(keys)
        for key, state in self.folder.snapshot(keys).items():
            entries.setdefault(key, {})["@fold"] = state
        return entries

    def restore_keyed(self, entries: dict[Any, dict[str, Any]]) -> None:
        super().restore_keyed(entries)
        self.folder.restore({key: states["@fold"] for key, states in entries.items() if "@fold" in states})
