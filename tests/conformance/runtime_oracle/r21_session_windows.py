# Event-time session windows (gap 3 s) per key; reduce to (key, first ts, last ts, count).


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
events = [(1000, "a"), (1500, "b"), (2000, "a"), (4500, "a"), (5000, "b"), (6000, "b"), (8000, "c"), (9000, "a"), (10000, "a")]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(0)).with_timestamp_assigner(lambda e, ts: e[0]))
          .map(lambda e: (e[1], e[0], e[0], 1))
          .key_by(lambda t: t[0])
          .window(EventTimeSessionWindows.with_gap(Time.seconds(3)))
          .reduce(lambda a, b: (a[0], min(a[1], b[1]), max(a[2], b[2]), a[3] + b[3])))
