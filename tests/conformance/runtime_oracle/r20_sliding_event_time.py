# Sliding event-time windows (10 s size, 5 s slide), sum per key; every element is in two windows.


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
events = [(1000, "a", 1), (3000, "b", 2), (6000, "a", 3), (7000, "b", 4), (12000, "a", 5), (16000, "b", 6)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(0)).with_timestamp_assigner(lambda e, ts: e[0]))
          .map(lambda e: (e[1], e[2]))
          .key_by(lambda t: t[0])
          .window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5)))
          .sum(1))
