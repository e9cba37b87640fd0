# window_all with an AllWindowFunction (apply) and a ProcessAllWindowFunction behind a count
# trigger and an evict-after TimeEvictor; windowAll's descriptions are JVM-specific (dropped).
from flowmagic.datastream.functions import AllWindowFunction, ProcessAllWindowFunction
from flowmagic.datastream.window import TimeEvictor
env.set_parallelism(2)
class Totals(AllWindowFunction):
    def apply(self, window, inputs): return [window.start]
class Firings(ProcessAllWindowFunction):
    def process(self, context, elements): return [context.window().start]
events = (env.from_collection([("a", 1000), ("b", 2500)])
    .assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])))
events.window_all(TumblingEventTimeWindows.of(Time.seconds(10))).apply(Totals()).print()
(events.window_all(TumblingEventTimeWindows.of(Time.seconds(10)))
    .trigger(CountTrigger.of(3))
    .evictor(TimeEvictor.of(Time.seconds(2), True))
    .process(Firings())
    .print())
