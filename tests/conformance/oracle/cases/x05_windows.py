# Window names (assigner class) and descriptions; windowAll's description is JVM-specific (dropped).
env.set_parallelism(2)
class CountAgg(AggregateFunction):
    def create_accumulator(self): return 0
    def add(self, value, acc): return acc + 1
    def get_result(self, acc): return acc
    def merge(self, a, b): return a + b
class DescribeWindow(ProcessWindowFunction):
    def process(self, key, ctx, elements): yield "%s@%s" % (key, ctx.window())
ws = (env.from_sequence(1, 100)
        .map(lambda x: ("k%d" % (x % 3), x))
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1] * 1000)))
keyed = ws.key_by(lambda t: t[0])
keyed.window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))).aggregate(CountAgg()).print()
keyed.window(EventTimeSessionWindows.with_gap(Time.seconds(3))).process(DescribeWindow()).print()
keyed.count_window(5).sum(1).print()
keyed.count_window(4, 2).max(1).print()
(ws.map(lambda t: t[1])
   .window_all(TumblingProcessingTimeWindows.of(Time.seconds(5)))
   .sum(0)
   .print())
