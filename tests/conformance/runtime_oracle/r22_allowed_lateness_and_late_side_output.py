# Tumbling 5 s windows with allowed lateness 2 s: late-but-allowed records re-fire the window,
# records later than that go to the late-data side output.


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
late = OutputTag("late")
events = [(1000, "a", 1), (2000, "a", 2), (6000, "a", 10), (3000, "a", 4), (7500, "a", 20),
          (4000, "a", 8), (11000, "a", 1), (9000, "a", 5), (14000, "a", 1), (9500, "a", 3)]
sums = (env.from_collection(events)
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(0))
            .with_timestamp_assigner(lambda e, ts: e[0]))
        .map(lambda e: (e[1], e[2]))
        .key_by(lambda t: t[0])
        .window(TumblingEventTimeWindows.of(Time.seconds(5)))
        .allowed_lateness(Time.seconds(2))
        .side_output_late_data(late)
        .sum(1))
result = (sums.map(lambda t: ("main", t[0], t[1]))
          .union(sums.get_side_output(late).map(lambda t: ("late", t[0], t[1]))))
