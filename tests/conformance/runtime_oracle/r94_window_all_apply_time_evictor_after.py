# window_all with an AllWindowFunction, a count trigger and a TimeEvictor that evicts after
# the function: each firing sees what is left within 2 s of the last firing's newest element.
env.set_parallelism(2)
from flowmagic.datastream.functions import AllWindowFunction
from flowmagic.datastream.window import TimeEvictor


class Totals(AllWindowFunction):
    def apply(self, window, inputs):
        times = [ts for _name, ts in inputs]
        return [(window.start, len(times), min(times), max(times))]


events = [("a", 1000), ("b", 1500), ("c", 2600), ("a", 3200), ("b", 4000), ("c", 4100),
          ("a", 6500), ("b", 9000), ("c", 9500), ("a", 12000), ("b", 13000)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1]))
          .window_all(TumblingEventTimeWindows.of(Time.seconds(10)))
          .trigger(CountTrigger.of(3))
          .evictor(TimeEvictor.of(Time.seconds(2), True))
          .apply(Totals()))
