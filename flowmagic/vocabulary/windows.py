"""Window assigners, triggers and evictors.

Each prints as Flink's ``toString()`` so that window operator descriptions read like
Flink's (``Window(TumblingEventTimeWindows(5000), EventTimeTrigger, ...)``). They are
plain data; the runtime gives them behaviour, class by class, in
``flowmagic/runtime/operators/window_assigner_trigger_evictor.py`` (a new assigner, trigger or evictor is a class
here and one registration there).
"""

from __future__ import annotations

import abc
import enum
from dataclasses import dataclass
from typing import Any

from flowmagic.errors import InvalidArgumentError
from flowmagic.vocabulary.time import Duration, to_millis

__all__ = [
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountEvictor",
    "CountSlidingWindowAssigner",
    "CountTrigger",
    "CountTumblingWindowAssigner",
    "CountWindow",
    "CountWindowAssigner",
    "DeltaFunction",
    "DeltaTrigger",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "DynamicSessionWindowAssigner",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "Evictor",
    "GlobalWindow",
    "GlobalWindows",
    "NeverTrigger",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SessionWindowAssigner",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "SlidingWindowAssigner",
    "TimeEvictor",
    "TimeWindow",
    "Trigger",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "TumblingWindowAssigner",
    "Window",
    "WindowAssigner",
]


# -- windows (what window functions see) -------------------------------------------------

#: Long.MAX_VALUE, the max timestamp of the global window (the end of time).
_MAX_TIMESTAMP = (1 << 63) - 1


class Window(abc.ABC):
    """PyFlink's base of windows: what a window function sees; ``max_timestamp()`` is the
    last timestamp the window holds."""

    @abc.abstractmethod
    def max_timestamp(self) -> int: ...


@dataclass(frozen=True, order=True)
class TimeWindow(Window):
    """The window ``[start, end)``."""

    start: int
    end: int

    def max_timestamp(self) -> int:
        return self.end - 1

    def intersects(self, other: TimeWindow) -> bool:
        return self.start <= other.end and self.end >= other.start

    def cover(self, other: TimeWindow) -> TimeWindow:
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))

    def __str__(self) -> str:
        return f"TimeWindow{{start={self.start}, end={self.end}}}"


@dataclass(frozen=True, order=True)
class GlobalWindow(Window):
    """The single window of GlobalWindows."""

    def max_timestamp(self) -> int:
        return _MAX_TIMESTAMP

    def __str__(self) -> str:
        return "GlobalWindow"

    # PyFlink's repr too (a window inside a printed tuple).
    __repr__ = __str__


@dataclass(frozen=True, order=True)
class CountWindow(Window):
    """PyFlink's window of its count windows (``key_by(...).count_window(size[, slide])`` in a
    PyFlink program): the ``id``-th window of its key. It prints, compares and hashes as
    PyFlink's (``CountWindow(id=0)``)."""

    id: int

    def max_timestamp(self) -> int:
        return _MAX_TIMESTAMP

    def __hash__(self) -> int:
        # PyFlink's long_to_int_with_bit_mixing (Python ints: no 64-bit wrap-around, as there).
        x = self.id
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
        x = (x ^ (x >> 27)) * 0x94D049BB133111EB
        return hash(x ^ (x >> 31))

    def __str__(self) -> str:
        return f"CountWindow(id={self.id})"


# -- triggers -----------------------------------------------------------------------------


class TriggerResult(enum.Enum):
    """What a trigger decides: fire the window's function, purge its contents, both or neither."""

    CONTINUE = (False, False)
    FIRE_AND_PURGE = (True, True)
    FIRE = (True, False)
    PURGE = (False, True)

    def is_fire(self) -> bool:
        return self.value[0]

    def is_purge(self) -> bool:
        return self.value[1]


class Trigger:
    """Base of triggers; ``class_name`` is what window descriptions show.

    A trigger of your own subclasses it with PyFlink's methods: ``on_element(element,
    timestamp, window, ctx)``, ``on_event_time(time, window, ctx)`` and
    ``on_processing_time(time, window, ctx)`` return a :class:`TriggerResult`;
    ``clear(window, ctx)`` drops its timers and state when the window goes; ``can_merge()``
    and ``on_merge(window, ctx)`` for session windows. ``ctx`` registers and deletes timers
    (``register_event_time_timer(t)`` ...), reads ``get_current_watermark()`` and
    ``get_current_processing_time()``, and holds state per key and window
    (``get_partitioned_state(descriptor)``, ``merge_partitioned_state(descriptor)``).
    """

    #: ``Class.of(...)`` as called, when a time span in it was a bare int (ms): see ``_note_int_spans``.
    int_span_call: str | None = None

    @property
    def class_name(self) -> str:
        return type(self).__name__

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        raise NotImplementedError(f"{self.class_name} does not implement on_element()")

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        raise NotImplementedError(f"{self.class_name} does not implement on_event_time()")

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        raise NotImplementedError(f"{self.class_name} does not implement on_processing_time()")

    def can_merge(self) -> bool:
        """Whether the trigger supports merging windows (sessions)."""
        return False

    def on_merge(self, window: Any, ctx: Any) -> None:
        raise NotImplementedError(f"{self.class_name} does not implement on_merge()")

    def clear(self, window: Any, ctx: Any) -> None:
        raise NotImplementedError(f"{self.class_name} does not implement clear()")

    def __str__(self) -> str:
        return f"{self.class_name}()"


class EventTimeTrigger(Trigger):
    """Fires when the watermark passes the end of the window."""

    @classmethod
    def create(cls) -> EventTimeTrigger:
        return cls()

    def can_merge(self) -> bool:
        return True


class ProcessingTimeTrigger(Trigger):
    """Fires when the wall clock passes the end of the window."""

    @classmethod
    def create(cls) -> ProcessingTimeTrigger:
        return cls()

    def can_merge(self) -> bool:
        return True


class NeverTrigger(Trigger):
    """``GlobalWindows``' default: never fires."""

    def can_merge(self) -> bool:
        return True


@dataclass(frozen=True, eq=False)
class ContinuousEventTimeTrigger(Trigger):
    """Fires every ``interval`` ms of event time within the window (aligned to multiples of
    the interval), and when the watermark passes the end of the window."""

    interval: int

    @classmethod
    def of(cls, interval: Duration | int) -> ContinuousEventTimeTrigger:
        return _note_int_spans(cls(_positive_millis(interval, "trigger interval")), f"{cls.__name__}.of", interval)

    def can_merge(self) -> bool:
        return True

    def __str__(self) -> str:
        return f"ContinuousEventTimeTrigger({self.interval})"


@dataclass(frozen=True, eq=False)
class ContinuousProcessingTimeTrigger(Trigger):
    """Fires every ``interval`` ms of processing time (aligned to multiples of the interval)."""

    interval: int

    @classmethod
    def of(cls, interval: Duration | int) -> ContinuousProcessingTimeTrigger:
        return _note_int_spans(cls(_positive_millis(interval, "trigger interval")), f"{cls.__name__}.of", interval)

    def can_merge(self) -> bool:
        return True

    def __str__(self) -> str:
        return f"ContinuousProcessingTimeTrigger({self.interval})"


@dataclass(frozen=True, eq=False)
class CountTrigger(Trigger):
    """Fires every ``max_count`` elements of a window."""

    max_count: int

    @classmethod
    def of(cls, max_count: int) -> CountTrigger:
        if max_count <= 0:
            raise InvalidArgumentError("CountTrigger count must be positive")
        return cls(max_count)

    def __str__(self) -> str:
        return f"CountTrigger({self.max_count})"


@dataclass(frozen=True, eq=False)
class PurgingTrigger(Trigger):
    """Turns every FIRE of ``nested`` into FIRE_AND_PURGE."""

    nested: Trigger

    @classmethod
    def of(cls, nested: Trigger) -> PurgingTrigger:
        return cls(nested)

    def can_merge(self) -> bool:
        return self.nested.can_merge()

    def __str__(self) -> str:
        return f"PurgingTrigger({self.nested})"


class DeltaFunction:
    """Flink's ``DeltaFunction``: ``get_delta(old_data_point, new_data_point)`` measures how
    far a window's newest element is from the one it last fired at (a float)."""

    def get_delta(self, old_data_point: Any, new_data_point: Any) -> float:
        raise NotImplementedError(f"{type(self).__name__} does not implement get_delta()")


@dataclass(frozen=True, eq=False)
class DeltaTrigger(Trigger):
    """Flink's ``DeltaTrigger``: fires when ``delta_function`` (a :class:`DeltaFunction` or a
    function of two elements) between the element it last fired at (first: the window's
    first element) and a new one exceeds ``threshold``; then that element is the new
    reference. ``type_info`` is the elements' type (Flink's state serializer)."""

    threshold: float
    delta_function: Any
    type_info: Any = None

    @classmethod
    def of(cls, threshold: float, delta_function: Any, type_info: Any = None) -> DeltaTrigger:
        if not callable(getattr(delta_function, "get_delta", None)) and not callable(delta_function):
            raise InvalidArgumentError(f"DeltaTrigger expects a DeltaFunction, got {delta_function!r}")
        return cls(float(threshold), delta_function, type_info)

    def __str__(self) -> str:
        return f"DeltaTrigger({self.delta_function}, {self.threshold})"


# -- evictors -----------------------------------------------------------------------------


class Evictor:
    """Base of evictors: they remove elements of a window before the window function runs,
    or after it with ``do_evict_after`` (Flink's ``EvictingWindowOperator``)."""

    #: ``Class.of(...)`` as called, when a time span in it was a bare int (ms): see ``_note_int_spans``.
    int_span_call: str | None = None

    do_evict_after: bool

    @property
    def class_name(self) -> str:
        return type(self).__name__


@dataclass(frozen=True, eq=False)
class CountEvictor(Evictor):
    """Keeps at most ``max_count`` elements of a window (the newest)."""

    max_count: int
    do_evict_after: bool = False

    @classmethod
    def of(cls, max_count: int, do_evict_after: bool = False) -> CountEvictor:
        if max_count <= 0:
            raise InvalidArgumentError("CountEvictor count must be positive")
        return cls(max_count, bool(do_evict_after))


@dataclass(frozen=True, eq=False)
class TimeEvictor(Evictor):
    """Keeps the elements whose timestamps are within ``window_size`` ms of the window's
    newest timestamp (``timestamp > max - window_size``); elements without timestamps are
    all kept."""

    window_size: int
    do_evict_after: bool = False

    @classmethod
    def of(cls, window_size: Duration | int, do_evict_after: bool = False) -> TimeEvictor:
        evictor = cls(to_millis(window_size, "TimeEvictor window size"), bool(do_evict_after))
        return _note_int_spans(evictor, f"{cls.__name__}.of", window_size)

    def __str__(self) -> str:
        return f"TimeEvictor({self.window_size})"


# -- assigners ----------------------------------------------------------------------------


class WindowAssigner:
    """Base of window assigners."""

    #: ``Class.of(...)`` as called, when a time span in it was a bare int (ms): see ``_note_int_spans``.
    int_span_call: str | None = None

    #: True for assigners driven by event time (watermarks), False for processing time.
    is_event_time: bool = False
    #: True for session windows, which merge.
    is_merging: bool = False

    def default_trigger(self) -> Trigger:
        return EventTimeTrigger() if self.is_event_time else ProcessingTimeTrigger()


def _positive_millis(span: Duration | int, what: str) -> int:
    millis = to_millis(span, what)
    if millis <= 0:
        raise InvalidArgumentError(f"{what} must be positive, got {millis} ms")
    return millis


def _note_int_spans(made: Any, call: str, *spans: Any) -> Any:
    """Mark ``made`` as built with a bare int for a time span, which flowmagic's own API reads
    as milliseconds and PyFlink refuses: a PyFlink program is told so when it uses ``made``
    (the windowed stream knows the program's API; ``of()`` does not)."""
    if any(isinstance(span, int) and not isinstance(span, bool) for span in spans):
        # Frozen dataclasses: the mark is not part of the value (compare=False elsewhere).
        given = ", ".join(repr(span) for span in spans if span is not None)
        object.__setattr__(made, "int_span_call", f"{call}({given})")
    return made


@dataclass(frozen=True, eq=False)
class TumblingWindowAssigner(WindowAssigner):
    """Fixed, non-overlapping windows of ``size`` ms, shifted by ``offset`` ms."""

    size: int
    offset: int = 0

    @classmethod
    def of(cls, size: Duration | int, offset: Duration | int | None = None):
        size_ms = _positive_millis(size, "window size")
        offset_ms = 0 if offset is None else to_millis(offset, "window offset")
        if abs(offset_ms) >= size_ms:
            raise InvalidArgumentError(f"{cls.__name__} parameters must satisfy abs(offset) < size")
        return _note_int_spans(cls(size_ms, offset_ms), f"{cls.__name__}.of", size, offset)

    def __str__(self) -> str:
        return f"{type(self).__name__}({self.size})"


class TumblingEventTimeWindows(TumblingWindowAssigner):
    """Fixed, non-overlapping event-time windows: ``TumblingEventTimeWindows.of(Time.seconds(5))``."""

    is_event_time = True


class TumblingProcessingTimeWindows(TumblingWindowAssigner):
    """Fixed, non-overlapping processing-time windows."""


@dataclass(frozen=True, eq=False)
class SlidingWindowAssigner(WindowAssigner):
    """Windows of ``size`` ms, one starting every ``slide`` ms, shifted by ``offset`` ms."""

    size: int
    slide: int
    offset: int = 0

    @classmethod
    def of(cls, size: Duration | int, slide: Duration | int, offset: Duration | int | None = None):
        size_ms = _positive_millis(size, "window size")
        slide_ms = _positive_millis(slide, "window slide")
        offset_ms = 0 if offset is None else to_millis(offset, "window offset")
        if abs(offset_ms) >= slide_ms:
            raise InvalidArgumentError(f"{cls.__name__} parameters must satisfy abs(offset) < slide and size > 0")
        return _note_int_spans(cls(size_ms, slide_ms, offset_ms), f"{cls.__name__}.of", size, slide, offset)

    def __str__(self) -> str:
        return f"{type(self).__name__}({self.size}, {self.slide})"


class SlidingEventTimeWindows(SlidingWindowAssigner):
    """Overlapping event-time windows of ``size``, one starting every ``slide``."""

    is_event_time = True


class SlidingProcessingTimeWindows(SlidingWindowAssigner):
    """Overlapping processing-time windows."""


@dataclass(frozen=True, eq=False)
class SessionWindowAssigner(WindowAssigner):
    """Per-key sessions that merge while elements are less than ``gap`` ms apart."""

    gap: int
    is_merging = True

    @classmethod
    def with_gap(cls, gap: Duration | int):
        return _note_int_spans(cls(_positive_millis(gap, "session gap")), f"{cls.__name__}.with_gap", gap)

    def __str__(self) -> str:
        return f"{type(self).__name__}({self.gap})"


class SessionWindowTimeGapExtractor:
    """PyFlink's gap extractor of dynamic sessions: ``extract(element)`` is the session gap
    (ms) that ``element`` opens."""

    def extract(self, element: Any) -> int:
        raise NotImplementedError(f"{type(self).__name__} does not implement extract()")


@dataclass(frozen=True, eq=False)
class DynamicSessionWindowAssigner(WindowAssigner):
    """Per-key sessions whose gap each element sets: ``extractor`` (a
    :class:`SessionWindowTimeGapExtractor` or a function of the element) returns it in ms."""

    extractor: Any
    is_merging = True

    @classmethod
    def with_dynamic_gap(cls, extractor: Any):
        if not callable(getattr(extractor, "extract", None)) and not callable(extractor):
            raise InvalidArgumentError(f"with_dynamic_gap() expects a SessionWindowTimeGapExtractor, got {extractor!r}")
        return cls(extractor)

    def __str__(self) -> str:
        return f"{type(self).__name__}()"


class DynamicEventTimeSessionWindows(DynamicSessionWindowAssigner):
    """Event-time sessions with a gap per element."""

    is_event_time = True


class DynamicProcessingTimeSessionWindows(DynamicSessionWindowAssigner):
    """Processing-time sessions with a gap per element."""


class EventTimeSessionWindows(SessionWindowAssigner):
    """Event-time sessions closed by ``gap`` of inactivity per key."""

    is_event_time = True

    @staticmethod
    def with_dynamic_gap(extractor: Any) -> DynamicEventTimeSessionWindows:
        """Sessions whose gap each element sets (``extractor.extract(element)``, ms)."""
        return DynamicEventTimeSessionWindows.with_dynamic_gap(extractor)


class ProcessingTimeSessionWindows(SessionWindowAssigner):
    """Processing-time sessions closed by ``gap`` of inactivity per key."""

    @staticmethod
    def with_dynamic_gap(extractor: Any) -> DynamicProcessingTimeSessionWindows:
        """Sessions whose gap each element sets (``extractor.extract(element)``, ms)."""
        return DynamicProcessingTimeSessionWindows.with_dynamic_gap(extractor)


@dataclass(frozen=True, eq=False)
class CountWindowAssigner(WindowAssigner):
    """PyFlink's count windows: each key's ``n``-th element (from 0) goes to every
    :class:`CountWindow` whose ids cover it, window ``id`` holding elements ``id * slide`` to
    ``id * slide + size - 1``; the default trigger, ``CountTrigger(size)``, fires a window
    when it holds ``size`` elements. The per-key count is keyed state named as PyFlink's."""

    size: int
    slide: int
    #: The ValueState that counts each key's elements (PyFlink's name for it).
    count_state_name: str = ""

    def __post_init__(self) -> None:
        for what, value in (("size", self.size), ("slide", self.slide)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise InvalidArgumentError(f"count window {what} must be a positive int, got {value!r}")

    def default_trigger(self) -> Trigger:
        return CountTrigger(self.size)

    def last_index(self, window: CountWindow) -> int:
        """The index of the last element the assigner puts into ``window``."""
        return window.id * self.slide + self.size - 1


class CountTumblingWindowAssigner(CountWindowAssigner):
    """PyFlink's ``CountTumblingWindowAssigner.of(size)``: windows of ``size`` elements per key."""

    def __init__(self, size: int):
        super().__init__(size, size, "tumble-count-assigner")

    @classmethod
    def of(cls, window_size: int) -> CountTumblingWindowAssigner:
        return cls(window_size)

    def __str__(self) -> str:
        return f"CountTumblingWindowAssigner({self.size})"


class CountSlidingWindowAssigner(CountWindowAssigner):
    """PyFlink's ``CountSlidingWindowAssigner.of(size, slide)``: per key, a window of ``size``
    elements starting every ``slide`` elements (elements between windows, when ``slide`` is
    larger, are in none)."""

    def __init__(self, size: int, slide: int):
        super().__init__(size, slide, "slide-count-assigner")

    @classmethod
    def of(cls, window_size: int, window_slide: int) -> CountSlidingWindowAssigner:
        return cls(window_size, window_slide)

    def __str__(self) -> str:
        return f"CountSlidingWindowAssigner({self.size}, {self.slide})"


class GlobalWindows(WindowAssigner):
    """One window holding everything, fired only by a custom trigger (count windows)."""

    @classmethod
    def create(cls) -> GlobalWindows:
        return cls()

    def default_trigger(self) -> Trigger:
        return NeverTrigger()

    def __str__(self) -> str:
        return f"GlobalWindows(trigger={type(self.default_trigger()).__name__})"
