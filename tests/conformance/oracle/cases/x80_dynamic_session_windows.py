# Sessions with a gap per element (with_dynamic_gap): Flink names the operator after the
# Dynamic*SessionWindows assigner it builds.
from flowmagic.datastream.window import SessionWindowTimeGapExtractor
env.set_parallelism(2)
class GapOf(SessionWindowTimeGapExtractor):
    def extract(self, element): return element[2]
class Describe(ProcessWindowFunction):
    def process(self, key, context, elements): return [key]
class SumGaps(ReduceFunction):
    def reduce(self, a, b): return (a[0], a[1], a[2] + b[2])
keyed = (env.from_collection([("a", 1000, 500), ("b", 1500, 2000)])
    .assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1]))
    .key_by(lambda e: e[0]))
keyed.window(EventTimeSessionWindows.with_dynamic_gap(GapOf())).process(Describe()).print()
keyed.window(ProcessingTimeSessionWindows.with_dynamic_gap(lambda e: e[2])).reduce(SumGaps()).print()
