# Sessions whose gap each element sets (PyFlink's with_dynamic_gap and a
# SessionWindowTimeGapExtractor): merging, and bridging by an out-of-order element.
env.set_parallelism(2)
from flowmagic.datastream.window import SessionWindowTimeGapExtractor


class GapOf(SessionWindowTimeGapExtractor):
    def extract(self, element):
        return element[2]


class Describe(ProcessWindowFunction):
    def process(self, key, context, elements):
        window = context.window()
        return [(key, window.start, window.end, len(list(elements)))]


events = [("a", 1000, 500), ("a", 1300, 500), ("b", 1500, 2000), ("a", 2500, 300), ("a", 2900, 1000),
          ("a", 2700, 300), ("b", 4000, 200), ("b", 4100, 200), ("a", 5000, 100), ("b", 9000, 50)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1))
              .with_timestamp_assigner(lambda e, ts: e[1]))
          .key_by(lambda e: e[0])
          .window(EventTimeSessionWindows.with_dynamic_gap(GapOf()))
          .process(Describe()))
