# coGroup, tumbling 5 s: per key and window both inputs' records (either side may be empty).


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

class Groups(CoGroupFunction):
    def co_group(self, first, second, out):
        key = (first or second)[0][0]
        out.collect((key, ",".join(e[2] for e in first), ",".join(e[2] for e in second)))


strategy = WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(0)).with_timestamp_assigner(lambda e, ts: e[1])
a = (env.from_collection([("k1", 1000, "a1"), ("k2", 1500, "a2"), ("k1", 3000, "a3"),
                          ("k1", 6000, "a4"), ("k2", 7000, "a5"), ("k3", 8000, "a6")])
     .assign_timestamps_and_watermarks(strategy))
b = (env.from_collection([("k1", 2000, "b1"), ("k1", 4000, "b2"), ("k2", 6500, "b3"),
                          ("k1", 7500, "b4"), ("k3", 12000, "b5")])
     .assign_timestamps_and_watermarks(strategy))
result = (a.co_group(b).where(lambda t: t[0]).equal_to(lambda t: t[0])
          .window(TumblingEventTimeWindows.of(Time.seconds(5)))
          .apply(Groups()))
