"""What each window assigner, trigger and evictor does at run time.

The API's assigners, triggers and evictors are plain data; each question the window
operator asks of them is one ``functools.singledispatch`` function here, with one
registration per class. A new assigner, trigger or evictor is a class in
``flowmagic/api/windows.py`` and its registrations below.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from flowmagic.api.windows import (
    CountEvictor,
    CountTrigger,
    EventTimeTrigger,
    GlobalWindow,
    GlobalWindows,
    NeverTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    SessionWindowAssigner,
    SlidingWindowAssigner,
    TimeWindow,
    Trigger,
    TumblingWindowAssigner,
    WindowAssigner,
)

if TYPE_CHECKING:
    from flowmagic.runtime.windowing import WindowOperator

__all__ = [
    "GlobalWindow",
    "TimeWindow",
    "assign_windows",
    "evict",
    "fires_on_timer",
    "on_element",
    "purges",
]


_GLOBAL = GlobalWindow()


def _window_start(timestamp: int, offset: int, size: int) -> int:
    return timestamp - (timestamp - offset + size) % size


# -- assigners: which windows an element belongs to ----------------------------------------


@functools.singledispatch
def assign_windows(assigner: WindowAssigner, timestamp: int) -> list[Any]:
    """The windows ``assigner`` puts an element with ``timestamp`` into."""
    raise TypeError(f"unsupported window assigner {assigner!r}")


@assign_windows.register(GlobalWindows)
def _(assigner: GlobalWindows, timestamp: int) -> list[Any]:
    return [_GLOBAL]


@assign_windows.register(TumblingWindowAssigner)
def _(assigner: TumblingWindowAssigner, timestamp: int) -> list[Any]:
    start = _window_start(timestamp, assigner.offset, assigner.size)
    return [TimeWindow(start, start + assigner.size)]


@assign_windows.register(SlidingWindowAssigner)
def _(assigner: SlidingWindowAssigner, timestamp: int) -> list[Any]:
    windows = []
    start = _window_start(timestamp, assigner.offset, assigner.slide)
    while start > timestamp - assigner.size:
        windows.append(TimeWindow(start, start + assigner.size))
        start -= assigner.slide
    return windows


@assign_windows.register(SessionWindowAssigner)
def _(assigner: SessionWindowAssigner, timestamp: int) -> list[Any]:
    return [TimeWindow(timestamp, timestamp + assigner.gap)]


# -- triggers: when a window fires ---------------------------------------------------------


@functools.singledispatch
def on_element(trigger: Trigger, operator: WindowOperator, key: Any, window: Any) -> bool:
    """``Trigger.onElement`` after an element joined ``window`` of ``key``: True to fire now.
    A trigger registers the timers it wants with ``operator``."""
    raise TypeError(f"unsupported trigger {trigger!r}")


@on_element.register(EventTimeTrigger)
def _(trigger: EventTimeTrigger, operator: WindowOperator, key: Any, window: Any) -> bool:
    if window.max_timestamp() <= operator.watermark:
        return True
    operator.register_timer("event", window.max_timestamp(), key, window)
    return False


@on_element.register(ProcessingTimeTrigger)
def _(trigger: ProcessingTimeTrigger, operator: WindowOperator, key: Any, window: Any) -> bool:
    operator.register_timer("processing", window.max_timestamp(), key, window)
    return False


@on_element.register(CountTrigger)
def _(trigger: CountTrigger, operator: WindowOperator, key: Any, window: Any) -> bool:
    slot = (key, window)
    operator.counts[slot] = operator.counts.get(slot, 0) + 1
    if operator.counts[slot] >= trigger.max_count:
        operator.counts[slot] = 0
        return True
    return False


@on_element.register(NeverTrigger)
def _(trigger: NeverTrigger, operator: WindowOperator, key: Any, window: Any) -> bool:
    return False


@on_element.register(PurgingTrigger)
def _(trigger: PurgingTrigger, operator: WindowOperator, key: Any, window: Any) -> bool:
    return on_element(trigger.nested, operator, key, window)


@functools.singledispatch
def fires_on_timer(trigger: Trigger, kind: str) -> bool:
    """``Trigger.onEventTime`` / ``onProcessingTime``: does a timer of ``kind`` (``"event"`` or
    ``"processing"``) the trigger registered fire the window?"""
    return False


@fires_on_timer.register(EventTimeTrigger)
def _(trigger: EventTimeTrigger, kind: str) -> bool:
    return kind == "event"


@fires_on_timer.register(ProcessingTimeTrigger)
def _(trigger: ProcessingTimeTrigger, kind: str) -> bool:
    return kind == "processing"


@fires_on_timer.register(PurgingTrigger)
def _(trigger: PurgingTrigger, kind: str) -> bool:
    return fires_on_timer(trigger.nested, kind)


@functools.singledispatch
def purges(trigger: Trigger) -> bool:
    """Whether the trigger's FIRE is a FIRE_AND_PURGE (the window's contents go)."""
    return False


@purges.register(PurgingTrigger)
def _(trigger: PurgingTrigger) -> bool:
    return True


# -- evictors: what of a window the function sees ------------------------------------------


@functools.singledispatch
def evict(evictor: Any, contents: list[Any]) -> list[Any]:
    """The window's elements ``(value, timestamp)`` left after ``evictor`` ran before the function."""
    raise TypeError(f"unsupported evictor {evictor!r}")


@evict.register(CountEvictor)
def _(evictor: CountEvictor, contents: list[Any]) -> list[Any]:
    return contents[len(contents) - evictor.max_count :] if len(contents) > evictor.max_count else contents
