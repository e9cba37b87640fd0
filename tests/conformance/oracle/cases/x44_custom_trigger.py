# A user-defined trigger: the window description names it by its class.
from flowmagic.datastream.window import Trigger, TriggerResult
env.set_parallelism(2)
class EveryN(Trigger):
    def on_element(self, element, timestamp, window, ctx): return TriggerResult.CONTINUE
    def on_event_time(self, time, window, ctx): return TriggerResult.FIRE
    def on_processing_time(self, time, window, ctx): return TriggerResult.CONTINUE
    def clear(self, window, ctx): pass
(env.from_collection([("a", 500, 1), ("b", 2000, 5)])
    .assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1]))
    .key_by(lambda t: t[0])
    .window(TumblingEventTimeWindows.of(Time.seconds(10)))
    .trigger(EveryN())
    .sum(2)
    .print())
