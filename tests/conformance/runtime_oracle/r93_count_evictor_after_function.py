# A CountEvictor that evicts after the window function (do_evict_after): each firing of the
# global window (every 2 elements) sees the element kept from the last one and the new ones.
env.set_parallelism(2)
from flowmagic.datastream.functions import WindowFunction
from flowmagic.datastream.window import CountEvictor


class Seen(WindowFunction):
    def apply(self, key, window, inputs):
        values = [value for _key, _ts, value in inputs]
        return [(key, len(values), sum(values))]


events = [("a", 1000, 1), ("a", 2000, 2), ("b", 2500, 10), ("a", 3000, 3),
          ("b", 3500, 20), ("a", 4000, 4), ("a", 5000, 5), ("b", 6000, 30)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1]))
          .key_by(lambda e: e[0])
          .window(GlobalWindows.create())
          .trigger(CountTrigger.of(2))
          .evictor(CountEvictor.of(1, do_evict_after=True))
          .apply(Seen()))
