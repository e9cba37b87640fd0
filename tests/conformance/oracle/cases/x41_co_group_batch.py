# coGroup in BATCH mode: the same translation as a join (tagging maps, union, keyed window).
env.set_parallelism(2)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
class Groups(CoGroupFunction):
    def co_group(self, first, second): yield (len(first), len(second))
strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])
a = env.from_collection([("k1", 1000, "a1"), ("k2", 1500, "a2")]).assign_timestamps_and_watermarks(strategy)
b = env.from_collection([("k1", 2000, "b1")]).assign_timestamps_and_watermarks(strategy)
(a.co_group(b).where(lambda t: t[0]).equal_to(lambda t: t[0])
  .window(TumblingEventTimeWindows.of(Time.seconds(5)))
  .apply(Groups())
  .print())
