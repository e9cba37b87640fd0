# Window join: Flink tags each input with a Map (at its input's parallelism), unites them,
# keys the union and windows it; the window function is a CoGroupWindowFunction.
env.set_parallelism(2)
class PairUp(JoinFunction):
    def join(self, first, second): return (first[0], first[2], second[2])
strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])
a = env.from_collection([("k1", 1000, "a1"), ("k2", 1500, "a2")]).assign_timestamps_and_watermarks(strategy)
b = env.from_collection([("k1", 2000, "b1")]).assign_timestamps_and_watermarks(strategy)
(a.join(b).where(lambda t: t[0]).equal_to(lambda t: t[0])
  .window(TumblingEventTimeWindows.of(Time.seconds(5)))
  .apply(PairUp())
  .print())
