"""PyFlink's ``pyflink.datastream.window``: windows, assigners and triggers."""

from flowmagic.api.pyflink import missing_names
from flowmagic.api.windows import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
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
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)

__all__ = [
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
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
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "WindowAssigner",
]

_COUNT = "use key_by(...).count_window(size[, slide]) (count windows are GlobalWindows with a count trigger)"

__getattr__ = missing_names(
    "flowmagic.datastream.window",
    {
        "CountWindow": _COUNT,
        "CountTumblingWindowAssigner": _COUNT,
        "CountSlidingWindowAssigner": _COUNT,
        "DynamicEventTimeSessionWindows": "use EventTimeSessionWindows.with_gap(gap) (a fixed gap)",
        "DynamicProcessingTimeSessionWindows": "use ProcessingTimeSessionWindows.with_gap(gap) (a fixed gap)",
        "SessionWindowTimeGapExtractor": "session gaps are fixed: EventTimeSessionWindows.with_gap(gap)",
        "MergingWindowAssigner": "session windows are the merging assigners flowmagic has",
    },
    __all__,
)
