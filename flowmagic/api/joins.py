"""Joins of two streams, as Flink's Java API has them: window joins, coGroups, interval joins.

``a.join(b).where(k1).equal_to(k2).window(assigner).apply(JoinFunction)`` and
``a.co_group(b)...apply(CoGroupFunction)`` are translated as Flink translates them: each
input is tagged by a ``Map`` (at its input's parallelism), the two are united, keyed by the
key of whichever side a record came from, windowed, and a ``CoGroupWindowFunction`` splits
each window's records back into the two sides. ``a.key_by(k1).interval_join(b.key_by(k2))
.between(lower, upper).process(ProcessJoinFunction)`` is one two-input ``Interval Join``
operator of both inputs re-keyed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flowmagic.api.arguments import check_assigner, check_callable
from flowmagic.errors import InvalidArgumentError, ProgramError
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.vocabulary.functions import Function, OutputTag, takes_collector
from flowmagic.vocabulary.time import Duration, to_millis
from flowmagic.vocabulary.types import TypeInformation

if TYPE_CHECKING:
    from flowmagic.api.datastream import DataStream, KeyedStream
    from flowmagic.api.windowed import WindowedStream
    from flowmagic.vocabulary.windows import Trigger, WindowAssigner

__all__ = [
    "CoGroupedStreams",
    "IntervalJoin",
    "IntervalJoined",
    "JoinedStreams",
    "TaggedUnion",
]


# -- what the translation of a window join runs ----------------------------------------------


@dataclass(frozen=True, slots=True)
class TaggedUnion:
    """A record of the united inputs: ``value`` came from input ``side`` (1 or 2)."""

    side: int
    value: Any


@dataclass(frozen=True)
class _Tagger:
    """Flink's ``Input1Tagger`` / ``Input2Tagger``: wraps a record of input ``side``."""

    side: int

    def __call__(self, value: Any) -> TaggedUnion:
        return TaggedUnion(self.side, value)


@dataclass(frozen=True)
class _UnionKeySelector:
    """The key of a tagged record: its own input's key selector applied to it."""

    first: Callable[[Any], Any]
    second: Callable[[Any], Any]

    def __call__(self, tagged: TaggedUnion) -> Any:
        return self.first(tagged.value) if tagged.side == 1 else self.second(tagged.value)


class _Collector:
    __slots__ = ("records",)

    def __init__(self) -> None:
        self.records: list[Any] = []

    def collect(self, value: Any) -> None:
        self.records.append(value)


def _bound(function: Any, method: str) -> Callable[..., Any]:
    """A function object's ``method`` (``JoinFunction.join`` ...), or the plain callable itself."""
    bound = getattr(function, method, None)
    return bound if callable(bound) and not isinstance(function, type) else function


@dataclass(frozen=True)
class _CoGroupCall:
    """A ``CoGroupFunction`` (or plain function) called in either of its styles."""

    function: Callable[..., Any]
    collector: bool

    def __call__(self, first: list[Any], second: list[Any]) -> Iterable[Any]:
        if not self.collector:
            return self.function(first, second) or ()
        out = _Collector()
        self.function(first, second, out)
        return out.records


@dataclass(frozen=True)
class _JoinCall:
    """Flink's ``JoinCoGroupFunction`` / ``FlatJoinCoGroupFunction``: every pair of a window's
    two sides, first input outermost, in arrival order."""

    function: Callable[..., Any]
    collector: bool

    def __call__(self, first: list[Any], second: list[Any]) -> Iterable[Any]:
        out = _Collector()
        for left in first:
            for right in second:
                if self.collector:
                    self.function(left, right, out)
                else:
                    out.collect(self.function(left, right))
        return out.records


class CoGroupWindowFunction(Function):
    """Flink's ``CoGroupWindowFunction``: splits a window's tagged records into the two
    inputs and hands them to the coGroup function (a join's pairs them up first)."""

    def __init__(self, co_group: _JoinCall | _CoGroupCall):
        self.co_group = co_group

    def _owner(self) -> Function | None:
        owner = getattr(self.co_group.function, "__self__", None)
        return owner if isinstance(owner, Function) else None

    def open(self, runtime_context: Any) -> None:
        owner = self._owner()
        if owner is not None:
            owner.open(runtime_context)

    def close(self) -> None:
        owner = self._owner()
        if owner is not None:
            owner.close()

    def apply(self, key: Any, window: Any, inputs: Iterable[TaggedUnion]) -> Iterable[Any]:
        first: list[Any] = []
        second: list[Any] = []
        for tagged in inputs:
            (first if tagged.side == 1 else second).append(tagged.value)
        return self.co_group(first, second) or ()


# -- window joins and coGroups --------------------------------------------------------------


class _TwoWindowed:
    """``a.join(b)`` / ``a.co_group(b)`` on its way to ``where().equal_to().window()``."""

    _method = ""

    def __init__(self, first: DataStream, second: DataStream):
        first._check_same_env(second, self._method)
        self._first = first
        self._second = second
        self._key1: Callable[[Any], Any] | None = None

    def where(self, key_selector: Callable[[Any], Any], key_type: TypeInformation | None = None) -> _TwoWindowed:
        """The key of the first input's records."""
        self._key1 = _bound(check_callable(key_selector, f"{self._method}().where()", "get_key"), "get_key")
        return self

    def equal_to(self, key_selector: Callable[[Any], Any], key_type: TypeInformation | None = None) -> _WithWindow:
        """The key of the second input's records, equal to the first's for records to meet."""
        if self._key1 is None:
            raise ProgramError(f"{self._method}(): call where() before equal_to().")
        key2 = _bound(check_callable(key_selector, f"{self._method}().equal_to()", "get_key"), "get_key")
        return _WithWindow(self, self._key1, key2)


class JoinedStreams(_TwoWindowed):
    """``a.join(b)``: pairs of records of equal keys in the same window."""

    _method = "join"


class CoGroupedStreams(_TwoWindowed):
    """``a.co_group(b)``: per key and window, the records of both inputs together."""

    _method = "co_group"


class _WithWindow:
    """``...where(k1).equal_to(k2)``: awaiting ``window()``, then trigger/evictor/lateness and
    ``apply()``."""

    def __init__(self, streams: _TwoWindowed, key1: Callable[[Any], Any], key2: Callable[[Any], Any]):
        self._streams = streams
        self._keys = (key1, key2)
        self._assigner: WindowAssigner | None = None
        self._trigger: Trigger | None = None
        self._evictor: Any = None
        self._lateness: Duration | int | None = None

    def window(self, assigner: WindowAssigner) -> _WithWindow:
        """The windows records of both inputs meet in."""

        self._assigner = check_assigner(assigner)
        return self

    def trigger(self, trigger: Trigger) -> _WithWindow:
        """Replace the assigner's default trigger."""
        self._trigger = trigger
        return self

    def evictor(self, evictor: Any) -> _WithWindow:
        """Evict records before the join function runs."""
        self._evictor = evictor
        return self

    def allowed_lateness(self, lateness: Duration | int) -> _WithWindow:
        """Keep windows for ``lateness`` after the watermark passed their end."""
        to_millis(lateness, "allowed lateness")
        self._lateness = lateness
        return self

    def apply(self, function: Any, output_type: TypeInformation | None = None) -> DataStream:
        """Run ``function`` per window: a JoinFunction ``join(first, second)`` (or a
        FlatJoinFunction ``join(first, second, out)``) per pair for a join, a CoGroupFunction
        ``co_group(first, second)`` per key for a coGroup."""
        if self._assigner is None:
            raise ProgramError(f"{self._streams._method}(): call window() before apply().")
        if isinstance(self._streams, JoinedStreams):
            call = _bound(check_callable(function, "join().apply()", "join"), "join")
            co_group: _JoinCall | _CoGroupCall = _JoinCall(call, takes_collector(call, 2))
        else:
            call = _bound(check_callable(function, "co_group().apply()", "co_group"), "co_group")
            co_group = _CoGroupCall(call, takes_collector(call, 2))
        return self._windowed(self._assigner).apply(CoGroupWindowFunction(co_group), output_type=output_type)

    def _windowed(self, assigner: WindowAssigner) -> WindowedStream:
        first, second = self._streams._first, self._streams._second
        tagged1 = first.map(_Tagger(1))
        tagged1.set_parallelism(first.get_parallelism())
        tagged2 = second.map(_Tagger(2))
        tagged2.set_parallelism(second.get_parallelism())
        windowed = tagged1.union(tagged2).key_by(_UnionKeySelector(*self._keys)).window(assigner)
        if self._trigger is not None:
            windowed.trigger(self._trigger)
        if self._evictor is not None:
            windowed.evictor(self._evictor)
        if self._lateness is not None:
            windowed.allowed_lateness(self._lateness)
        return windowed


# -- interval joins -------------------------------------------------------------------------


class IntervalJoin:
    """``left.interval_join(right)``: awaiting ``between(lower, upper)``."""

    def __init__(self, left: KeyedStream, right: KeyedStream):
        from flowmagic.api.datastream import KeyedStream

        if not isinstance(right, KeyedStream):
            raise ProgramError("interval_join() expects a KeyedStream: key the other input with key_by() first.")
        left._check_same_env(right, "interval_join")
        self._left = left
        self._right = right

    def in_event_time(self) -> IntervalJoin:
        """Join on event time (the only time interval joins have)."""
        return self

    def in_processing_time(self) -> IntervalJoin:
        """Not supported, as in Flink: interval joins are in event time."""
        raise ProgramError("Time-bounded stream joins are only supported in event time")

    def between(self, lower_bound: Duration | int, upper_bound: Duration | int) -> IntervalJoined:
        """Join ``left`` with every ``right`` whose timestamp is in
        ``[left + lower_bound, left + upper_bound]``."""
        lower = to_millis(lower_bound, "interval join lower bound")
        upper = to_millis(upper_bound, "interval join upper bound")
        if lower > upper:
            raise InvalidArgumentError("lowerBound <= upperBound must be fulfilled")
        return IntervalJoined(self._left, self._right, lower, upper)


class IntervalJoined:
    """An interval join with its bounds, awaiting ``process(ProcessJoinFunction)``."""

    def __init__(self, left: KeyedStream, right: KeyedStream, lower: int, upper: int):
        self._left = left
        self._right = right
        self._bounds = (lower, upper)
        self._inclusive = [True, True]
        self._late_tags: list[str | None] = [None, None]

    def lower_bound_exclusive(self) -> IntervalJoined:
        """Leave out pairs exactly ``lower_bound`` apart."""
        self._inclusive[0] = False
        return self

    def upper_bound_exclusive(self) -> IntervalJoined:
        """Leave out pairs exactly ``upper_bound`` apart."""
        self._inclusive[1] = False
        return self

    def side_output_left_late_data(self, tag: OutputTag) -> IntervalJoined:
        """Send left records behind the watermark to the side output ``tag``."""
        self._late_tags[0] = _tag_id(tag, "side_output_left_late_data")
        return self

    def side_output_right_late_data(self, tag: OutputTag) -> IntervalJoined:
        """Send right records behind the watermark to the side output ``tag``."""
        self._late_tags[1] = _tag_id(tag, "side_output_right_late_data")
        return self

    def process(self, function: Any, output_type: TypeInformation | None = None) -> DataStream:
        """Call ``function.process_element(left, right, ctx)`` per pair (see
        :class:`ProcessJoinFunction`); the results carry the larger of both timestamps."""
        check_callable(function, "interval_join().process()", "process_element")
        lower, upper = self._bounds
        # Flink narrows exclusive bounds by a millisecond, and checks them again.
        lower += 0 if self._inclusive[0] else 1
        upper -= 0 if self._inclusive[1] else 1
        if lower > upper:
            raise InvalidArgumentError("lowerBound <= upperBound must be fulfilled")
        connected = self._left.connect(self._right).key_by(self._left.key_selector, self._right.key_selector)
        params = {
            "function": function,
            "lower": lower,
            "upper": upper,
            "late_tags": tuple(self._late_tags),
            "key_selectors": (self._left.key_selector, self._right.key_selector),
        }
        return connected._two_input("Interval Join", OperatorSpec(OperatorKind.INTERVAL_JOIN, params), output_type)


def _tag_id(tag: OutputTag, method: str) -> str:
    if not isinstance(tag, OutputTag):
        raise ProgramError(f"{method}() expects an OutputTag, got {tag!r}.")
    return tag.tag_id
