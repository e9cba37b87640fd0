"""What each window assigner, trigger and evictor does at run time.

The API's assigners, triggers and evictors are plain data; each question the window
operator asks of them is one ``functools.singledispatch`` function here, with one
registration per class. A new assigner, trigger or evictor is a class in
``flowmagic/vocabulary/windows.py`` and its registrations below.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from flowmagic.errors import InvalidArgumentError
from flowmagic.vocabulary.state import ValueStateDescriptor
from flowmagic.vocabulary.windows import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountEvictor,
    CountTrigger,
    CountWindow,
    CountWindowAssigner,
    DeltaTrigger,
    DynamicSessionWindowAssigner,
    EventTimeTrigger,
    GlobalWindow,
    GlobalWindows,
    NeverTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    SessionWindowAssigner,
    SlidingWindowAssigner,
    TimeEvictor,
    TimeWindow,
    Trigger,
    TriggerResult,
    TumblingWindowAssigner,
    WindowAssigner,
)

if TYPE_CHECKING:
    from flowmagic.runtime.operators.context import KeyedStateStore
    from flowmagic.runtime.operators.window_operator import TriggerContext

__all__ = [
    "GlobalWindow",
    "TimeWindow",
    "assign_windows",
    "clear",
    "evict",
    "holds_its_last_element",
    "on_element",
    "on_event_time",
    "on_merge",
    "on_processing_time",
]


_GLOBAL = GlobalWindow()


def _window_start(timestamp: int, offset: int, size: int) -> int:
    return timestamp - (timestamp - offset + size) % size


# -- assigners: which windows an element belongs to ----------------------------------------


@functools.singledispatch
def assign_windows(assigner: WindowAssigner, element: Any, timestamp: int, state: KeyedStateStore) -> list[Any]:
    """The windows ``assigner`` puts ``element`` with ``timestamp`` into; ``state`` is the
    keyed state of the element's key (PyFlink's count assigners count the key's elements)."""
    raise TypeError(f"unsupported window assigner {assigner!r}")


@assign_windows.register(GlobalWindows)
def _(assigner: GlobalWindows, element: Any, timestamp: int, state: KeyedStateStore) -> list[Any]:
    return [_GLOBAL]


@assign_windows.register(TumblingWindowAssigner)
def _(assigner: TumblingWindowAssigner, element: Any, timestamp: int, state: KeyedStateStore) -> list[Any]:
    start = _window_start(timestamp, assigner.offset, assigner.size)
    return [TimeWindow(start, start + assigner.size)]


@assign_windows.register(SlidingWindowAssigner)
def _(assigner: SlidingWindowAssigner, element: Any, timestamp: int, state: KeyedStateStore) -> list[Any]:
    windows = []
    start = _window_start(timestamp, assigner.offset, assigner.slide)
    while start > timestamp - assigner.size:
        windows.append(TimeWindow(start, start + assigner.size))
        start -= assigner.slide
    return windows


@assign_windows.register(SessionWindowAssigner)
def _(assigner: SessionWindowAssigner, element: Any, timestamp: int, state: KeyedStateStore) -> list[Any]:
    return [TimeWindow(timestamp, timestamp + assigner.gap)]


@assign_windows.register(DynamicSessionWindowAssigner)
def _(assigner: DynamicSessionWindowAssigner, element: Any, timestamp: int, state: KeyedStateStore) -> list[Any]:
    extract = getattr(assigner.extractor, "extract", assigner.extractor)
    gap = extract(element)
    if gap <= 0:
        raise InvalidArgumentError("Dynamic session time gap must satisfy 0 < gap")
    return [TimeWindow(timestamp, timestamp + gap)]


@assign_windows.register(CountWindowAssigner)
def _(assigner: CountWindowAssigner, element: Any, timestamp: int, state: KeyedStateStore) -> list[Any]:
    count = state.get_state(ValueStateDescriptor(assigner.count_state_name, None))
    index = count.value() or 0
    count.update(index + 1)
    # PyFlink's CountSlidingWindowAssigner: the windows whose id ranges cover the index,
    # newest first (none when the index falls between windows of a slide larger than size).
    windows = []
    window_id = index // assigner.slide
    while window_id >= 0 and window_id * assigner.slide <= index <= assigner.last_index(CountWindow(window_id)):
        windows.append(CountWindow(window_id))
        window_id -= 1
    return windows


@functools.singledispatch
def holds_its_last_element(assigner: WindowAssigner, window: Any, state: KeyedStateStore) -> bool:
    """Whether the element just assigned to ``window`` (of the key of ``state``) was the last
    that ``assigner`` will ever put into it (time windows: never known, a late element may come)."""
    return False


@holds_its_last_element.register(CountWindowAssigner)
def _(assigner: CountWindowAssigner, window: Any, state: KeyedStateStore) -> bool:
    count = state.get_state(ValueStateDescriptor(assigner.count_state_name, None)).value()
    return bool(count == assigner.last_index(window) + 1)


# -- triggers: when a window fires ---------------------------------------------------------
#
# Flink's Trigger methods, one function each, registered per trigger class; ``ctx`` is the
# window operator's TriggerContext bound to the key and window at hand. A trigger of the
# user's own (a Trigger subclass) has its methods called.

_CONTINUE = TriggerResult.CONTINUE
_FIRE = TriggerResult.FIRE
#: The partitioned state where continuous triggers keep their next firing time.
_FIRE_TIME = ValueStateDescriptor("fire-time", None)


@functools.singledispatch
def on_element(trigger: Trigger, ctx: TriggerContext, element: Any, timestamp: int, window: Any) -> TriggerResult:
    """``Trigger.onElement``: an element joined ``window``."""
    raise TypeError(f"unsupported trigger {trigger!r}")


@functools.singledispatch
def on_event_time(trigger: Trigger, ctx: TriggerContext, time: int, window: Any) -> TriggerResult:
    """``Trigger.onEventTime``: an event-time timer the trigger registered for ``window`` is due."""
    return _CONTINUE


@functools.singledispatch
def on_processing_time(trigger: Trigger, ctx: TriggerContext, time: int, window: Any) -> TriggerResult:
    """``Trigger.onProcessingTime``: a processing-time timer of ``window`` is due."""
    return _CONTINUE


@functools.singledispatch
def on_merge(trigger: Trigger, ctx: TriggerContext, window: Any) -> None:
    """``Trigger.onMerge``: sessions merged into ``window`` (``ctx.merged`` are the old ones)."""


@functools.singledispatch
def clear(trigger: Trigger, ctx: TriggerContext, window: Any) -> None:
    """``Trigger.clear``: ``window`` is gone; drop the trigger's timers and state of it."""


@on_element.register(Trigger)
def _(trigger: Trigger, ctx: TriggerContext, element: Any, timestamp: int, window: Any) -> TriggerResult:
    return _checked(trigger, "on_element", trigger.on_element(element, timestamp, window, ctx))


@on_event_time.register(Trigger)
def _(trigger: Trigger, ctx: TriggerContext, time: int, window: Any) -> TriggerResult:
    return _checked(trigger, "on_event_time", trigger.on_event_time(time, window, ctx))


@on_processing_time.register(Trigger)
def _(trigger: Trigger, ctx: TriggerContext, time: int, window: Any) -> TriggerResult:
    return _checked(trigger, "on_processing_time", trigger.on_processing_time(time, window, ctx))


@on_merge.register(Trigger)
def _(trigger: Trigger, ctx: TriggerContext, window: Any) -> None:
    trigger.on_merge(window, ctx)


@clear.register(Trigger)
def _(trigger: Trigger, ctx: TriggerContext, window: Any) -> None:
    trigger.clear(window, ctx)


def _checked(trigger: Trigger, method: str, result: Any) -> TriggerResult:
    if not isinstance(result, TriggerResult):
        raise TypeError(f"{trigger.class_name}.{method}() must return a TriggerResult, got {result!r}")
    return result


@on_element.register(EventTimeTrigger)
def _(trigger: EventTimeTrigger, ctx: TriggerContext, element: Any, timestamp: int, window: Any) -> TriggerResult:
    if window.max_timestamp() <= ctx.get_current_watermark():
        return _FIRE
    ctx.register_event_time_timer(window.max_timestamp())
    return _CONTINUE


@on_event_time.register(EventTimeTrigger)
def _(trigger: EventTimeTrigger, ctx: TriggerContext, time: int, window: Any) -> TriggerResult:
    return _FIRE if time == window.max_timestamp() else _CONTINUE


@clear.register(EventTimeTrigger)
def _(trigger: EventTimeTrigger, ctx: TriggerContext, window: Any) -> None:
    ctx.delete_event_time_timer(window.max_timestamp())


@on_merge.register(EventTimeTrigger)
def _(trigger: EventTimeTrigger, ctx: TriggerContext, window: Any) -> None:
    # Only while the watermark is before the merged window's end: past it, on_element fires
    # the window, and a timer would fire it twice.
    if window.max_timestamp() > ctx.get_current_watermark():
        ctx.register_event_time_timer(window.max_timestamp())


@on_element.register(ProcessingTimeTrigger)
def _(trigger: ProcessingTimeTrigger, ctx: TriggerContext, element: Any, timestamp: int, window: Any) -> TriggerResult:
    ctx.register_processing_time_timer(window.max_timestamp())
    return _CONTINUE


@on_processing_time.register(ProcessingTimeTrigger)
def _(trigger: ProcessingTimeTrigger, ctx: TriggerContext, time: int, window: Any) -> TriggerResult:
    return _FIRE


@clear.register(ProcessingTimeTrigger)
def _(trigger: ProcessingTimeTrigger, ctx: TriggerContext, window: Any) -> None:
    ctx.delete_processing_time_timer(window.max_timestamp())


@on_merge.register(ProcessingTimeTrigger)
def _(trigger: ProcessingTimeTrigger, ctx: TriggerContext, window: Any) -> None:
    if window.max_timestamp() > ctx.get_current_processing_time():
        ctx.register_processing_time_timer(window.max_timestamp())


@on_element.register(CountTrigger)
def _(trigger: CountTrigger, ctx: TriggerContext, element: Any, timestamp: int, window: Any) -> TriggerResult:
    return _FIRE if ctx.count_element(trigger.max_count) else _CONTINUE


@on_element.register(NeverTrigger)
def _(trigger: NeverTrigger, ctx: TriggerContext, element: Any, timestamp: int, window: Any) -> TriggerResult:
    return _CONTINUE


@on_element.register(ContinuousEventTimeTrigger)
def _(
    trigger: ContinuousEventTimeTrigger, ctx: TriggerContext, element: Any, timestamp: int, window: Any
) -> TriggerResult:
    if window.max_timestamp() <= ctx.get_current_watermark():
        return _FIRE
    ctx.register_event_time_timer(window.max_timestamp())
    fire_time = ctx.get_partitioned_state(_FIRE_TIME)
    if fire_time.value() is None:
        _next_fire(trigger.interval, ctx, timestamp - timestamp % trigger.interval, window, event_time=True)
    return _CONTINUE


@on_event_time.register(ContinuousEventTimeTrigger)
def _(trigger: ContinuousEventTimeTrigger, ctx: TriggerContext, time: int, window: Any) -> TriggerResult:
    if time == window.max_timestamp():
        return _FIRE
    fire_time = ctx.get_partitioned_state(_FIRE_TIME)
    if fire_time.value() == time:
        fire_time.clear()
        _next_fire(trigger.interval, ctx, time, window, event_time=True)
        return _FIRE
    return _CONTINUE


@on_element.register(ContinuousProcessingTimeTrigger)
def _(
    trigger: ContinuousProcessingTimeTrigger, ctx: TriggerContext, element: Any, timestamp: int, window: Any
) -> TriggerResult:
    fire_time = ctx.get_partitioned_state(_FIRE_TIME)
    if fire_time.value() is None:
        now = ctx.get_current_processing_time()
        _next_fire(trigger.interval, ctx, now - now % trigger.interval, window, event_time=False)
    return _CONTINUE


@on_processing_time.register(ContinuousProcessingTimeTrigger)
def _(trigger: ContinuousProcessingTimeTrigger, ctx: TriggerContext, time: int, window: Any) -> TriggerResult:
    fire_time = ctx.get_partitioned_state(_FIRE_TIME)
    if fire_time.value() == time:
        fire_time.clear()
        _next_fire(trigger.interval, ctx, time, window, event_time=False)
        return _FIRE
    return _CONTINUE


def _next_fire(interval: int, ctx: TriggerContext, time: int, window: Any, *, event_time: bool) -> None:
    # The next firing is an interval on, but never past the end of the window.
    next_time = min(time + interval, window.max_timestamp())
    ctx.get_partitioned_state(_FIRE_TIME).update(next_time)
    if event_time:
        ctx.register_event_time_timer(next_time)
    else:
        ctx.register_processing_time_timer(next_time)


@on_merge.register(ContinuousEventTimeTrigger)
@on_merge.register(ContinuousProcessingTimeTrigger)
def _(trigger: Trigger, ctx: TriggerContext, window: Any) -> None:
    # The merged window fires next when the earliest of the merged ones would have.
    earliest = ctx.merged_fire_times(_FIRE_TIME)
    if earliest is not None:
        ctx.get_partitioned_state(_FIRE_TIME).update(earliest)
        if isinstance(trigger, ContinuousEventTimeTrigger):
            ctx.register_event_time_timer(earliest)
        else:
            ctx.register_processing_time_timer(earliest)


@clear.register(ContinuousEventTimeTrigger)
@clear.register(ContinuousProcessingTimeTrigger)
def _(trigger: Trigger, ctx: TriggerContext, window: Any) -> None:
    fire_time = ctx.get_partitioned_state(_FIRE_TIME)
    if fire_time.value() is not None:
        if isinstance(trigger, ContinuousEventTimeTrigger):
            ctx.delete_event_time_timer(fire_time.value())
        else:
            ctx.delete_processing_time_timer(fire_time.value())
        fire_time.clear()


#: DeltaTrigger's partitioned state: the element the window last fired at.
_LAST_ELEMENT = ValueStateDescriptor("last-element", None)


@on_element.register(DeltaTrigger)
def _(trigger: DeltaTrigger, ctx: TriggerContext, element: Any, timestamp: int, window: Any) -> TriggerResult:
    last = ctx.get_partitioned_state(_LAST_ELEMENT)
    if last.value() is None:
        last.update(element)
        return _CONTINUE
    delta = getattr(trigger.delta_function, "get_delta", trigger.delta_function)
    if delta(last.value(), element) > trigger.threshold:
        last.update(element)
        return _FIRE
    return _CONTINUE


@clear.register(DeltaTrigger)
def _(trigger: DeltaTrigger, ctx: TriggerContext, window: Any) -> None:
    ctx.get_partitioned_state(_LAST_ELEMENT).clear()


@on_merge.register(CountTrigger)
@on_merge.register(NeverTrigger)
def _(trigger: Trigger, ctx: TriggerContext, window: Any) -> None:
    return None


@on_event_time.register(ProcessingTimeTrigger)
@on_event_time.register(ContinuousProcessingTimeTrigger)
@on_event_time.register(CountTrigger)
@on_event_time.register(NeverTrigger)
@on_event_time.register(DeltaTrigger)
@on_processing_time.register(EventTimeTrigger)
@on_processing_time.register(ContinuousEventTimeTrigger)
@on_processing_time.register(CountTrigger)
@on_processing_time.register(NeverTrigger)
@on_processing_time.register(DeltaTrigger)
def _(trigger: Trigger, ctx: TriggerContext, time: int, window: Any) -> TriggerResult:
    # Timers these triggers did not set (the window's cleanup timer) ask them too, as in Flink.
    return _CONTINUE


@clear.register(CountTrigger)
@clear.register(NeverTrigger)
def _(trigger: Trigger, ctx: TriggerContext, window: Any) -> None:
    # The count is the window operator's, dropped with the window.
    return None


def _purging(result: TriggerResult) -> TriggerResult:
    return TriggerResult.FIRE_AND_PURGE if result.is_fire() else result


@on_element.register(PurgingTrigger)
def _(trigger: PurgingTrigger, ctx: TriggerContext, element: Any, timestamp: int, window: Any) -> TriggerResult:
    return _purging(on_element(trigger.nested, ctx, element, timestamp, window))


@on_event_time.register(PurgingTrigger)
def _(trigger: PurgingTrigger, ctx: TriggerContext, time: int, window: Any) -> TriggerResult:
    return _purging(on_event_time(trigger.nested, ctx, time, window))


@on_processing_time.register(PurgingTrigger)
def _(trigger: PurgingTrigger, ctx: TriggerContext, time: int, window: Any) -> TriggerResult:
    return _purging(on_processing_time(trigger.nested, ctx, time, window))


@on_merge.register(PurgingTrigger)
def _(trigger: PurgingTrigger, ctx: TriggerContext, window: Any) -> None:
    on_merge(trigger.nested, ctx, window)


@clear.register(PurgingTrigger)
def _(trigger: PurgingTrigger, ctx: TriggerContext, window: Any) -> None:
    clear(trigger.nested, ctx, window)


# -- evictors: what of a window the function sees ------------------------------------------


@functools.singledispatch
def evict(evictor: Any, contents: list[Any]) -> list[Any]:
    """The window's elements ``(value, timestamp)`` that ``evictor`` leaves."""
    raise TypeError(f"unsupported evictor {evictor!r}")


@evict.register(CountEvictor)
def _(evictor: CountEvictor, contents: list[Any]) -> list[Any]:
    return contents[len(contents) - evictor.max_count :] if len(contents) > evictor.max_count else contents


@evict.register(TimeEvictor)
def _(evictor: TimeEvictor, contents: list[Any]) -> list[Any]:
    # As Flink: a window whose first element has no timestamp keeps everything.
    if not contents or contents[0][1] is None:
        return contents
    cutoff = max(timestamp for _value, timestamp in contents if timestamp is not None) - evictor.window_size
    return [(value, timestamp) for value, timestamp in contents if timestamp is None or timestamp > cutoff]
