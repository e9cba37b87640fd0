# Session windows (gap 2 s) at p=2, bounded out-of-orderness 1 s, reduce + late side output.


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


env.set_parallelism(2)
late = OutputTag("late")
events = [(1000, "a", 1), (1500, "b", 2), (4000, "c", 4), (9000, "a", 8), (2500, "a", 16), (6500, "b", 32),
          (7800, "a", 64), (3000, "c", 128), (12000, "b", 256), (9500, "c", 512), (8200, "b", 1024),
          (30000, "a", 2048)]
sessions = (env.from_collection(events)
            .assign_timestamps_and_watermarks(
                WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(1000))
                .with_timestamp_assigner(lambda e, ts: e[0]))
            .key_by(lambda e: e[1])
            .window(EventTimeSessionWindows.with_gap(Time.milliseconds(2000)))
            .side_output_late_data(late)
            .reduce(lambda x, y: (min(x[0], y[0]), x[1], x[2] + y[2])))
result = sessions.union(sessions.get_side_output(late).map(lambda e: (e[0], "late:" + e[1], e[2])))
