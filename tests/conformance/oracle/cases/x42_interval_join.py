# Interval join: connect(...).key_by(k1, k2) re-keys both keyed inputs (two new partitions)
# into one two-input "Interval Join" operator.
env.set_parallelism(2)
class Within(ProcessJoinFunction):
    def process_element(self, left, right, ctx): yield (left[0], left[2], right[2], ctx.get_timestamp())
strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])
a = env.from_collection([("k1", 1000, "a1"), ("k2", 1500, "a2")]).assign_timestamps_and_watermarks(strategy)
b = env.from_collection([("k1", 2000, "b1")]).assign_timestamps_and_watermarks(strategy)
(a.key_by(lambda t: t[0])
  .interval_join(b.key_by(lambda t: t[0]))
  .between(Time.milliseconds(-2000), Time.seconds(1))
  .process(Within())
  .print())
