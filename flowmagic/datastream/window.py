"""PyFlink's ``pyflink.datastream.window``: windows, assigners and triggers."""

from flowmagic.api.pyflink import missing_names
from flowmagic.api.windows import (
    CountEvictor,
    CountTrigger,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindow,
    GlobalWindows,
    NeverTrigger,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    PurgingTrigger,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    Trigger,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)

__all__ = [
    "CountEvictor",
    "CountTrigger",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "GlobalWindow",
    "GlobalWindows",
    "NeverTrigger",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeWindow",
    "Trigger",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "WindowAssigner",
]

_COUNT = "use key_by(...).count_window(size[, slide]) (count windows are GlobalWindows with a count trigger)"
_CUSTOM_TRIGGER = (
    "custom triggers are not supported; use EventTimeTrigger, ProcessingTimeTrigger, CountTrigger, PurgingTrigger"
)

__getattr__ = missing_names(
    "flowmagic.datastream.window",
    {
        "CountWindow": _COUNT,
        "CountTumblingWindowAssigner": _COUNT,
        "CountSlidingWindowAssigner": _COUNT,
        "ContinuousEventTimeTrigger": _CUSTOM_TRIGGER,
        "ContinuousProcessingTimeTrigger": _CUSTOM_TRIGGER,
        "TriggerResult": _CUSTOM_TRIGGER,
        "DynamicEventTimeSessionWindows": "use EventTimeSessionWindows.with_gap(gap) (a fixed gap)",
        "DynamicProcessingTimeSessionWindows": "use ProcessingTimeSessionWindows.with_gap(gap) (a fixed gap)",
        "SessionWindowTimeGapExtractor": "session gaps are fixed: EventTimeSessionWindows.with_gap(gap)",
        "MergingWindowAssigner": "session windows are the merging assigners flowmagic has",
    },
    __all__,
)
