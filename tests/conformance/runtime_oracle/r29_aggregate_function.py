# Keyed tumbling 5 s windows with an AggregateFunction computing (key, average as float).


class PerRecordWatermarks(WatermarkGenerator):
    """The Java twin's punctuated generator: after every record, the highest timestamp seen
    less the lag less 1 ms (Flink's built-in generators emit every 200 ms of wall-clock time)."""

    def __init__(self, lag_ms):
        self.lag_ms = lag_ms
        self.max_timestamp = None

    def on_event(self, event, event_timestamp, output):
        if self.max_timestamp is None or event_timestamp > self.max_timestamp:
            self.max_timestamp = event_timestamp
        output.emit_watermark(Watermark(self.max_timestamp - self.lag_ms - 1))


env.set_parallelism(1)


class Avg(AggregateFunction):
    def create_accumulator(self):
        return ("", 0, 0)

    def add(self, value, accumulator):
        return (value[0], accumulator[1] + value[1], accumulator[2] + 1)

    def get_result(self, accumulator):
        return (accumulator[0], accumulator[1] / accumulator[2])

    def merge(self, a, b):
        return (a[0] or b[0], a[1] + b[1], a[2] + b[2])


events = [(1000, "a", 1), (2000, "b", 4), (3000, "a", 2), (6000, "a", 6), (7000, "b", 5), (8000, "b", 6), (9000, "a", 7), (12000, "b", 3)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(0)).with_timestamp_assigner(lambda e, ts: e[0]))
          .map(lambda e: (e[1], e[2]))
          .key_by(lambda t: t[0])
          .window(TumblingEventTimeWindows.of(Time.seconds(5)))
          .aggregate(Avg()))
