# ContinuousEventTimeTrigger.of(3 s) on 10 s tumbling windows: the running sum every 3 s of
# event time (aligned to multiples of 3 s) and at the window's end.
env.set_parallelism(1)
from flowmagic.datastream.window import ContinuousEventTimeTrigger, PurgingTrigger

events = [("a", 500, 1), ("a", 1500, 2), ("b", 2000, 5), ("a", 3500, 3), ("a", 4200, 4),
          ("b", 6100, 1), ("a", 7000, 5), ("a", 9900, 6), ("b", 11000, 7), ("a", 12500, 8)]
keyed = (env.from_collection(events)
         .assign_timestamps_and_watermarks(
             WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1]))
         .key_by(lambda t: t[0]))
result = (keyed.window(TumblingEventTimeWindows.of(Time.seconds(10)))
          .trigger(ContinuousEventTimeTrigger.of(Time.seconds(3)))
          .sum(2))
