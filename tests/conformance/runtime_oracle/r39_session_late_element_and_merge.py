# Session windows (gap 3 s), per-record watermarks, late-data side output. A late element
# whose own session window is already late is dropped and leaves no window behind; an element
# behind the watermark whose window is not late yet is kept (and merges).


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


class SessionBounds(ProcessWindowFunction):
    def process(self, key, context, elements):
        stamps = sorted(e[0] for e in elements)
        yield (key, context.window().start, context.window().end, sum(e[2] for e in elements), str(stamps))


late = OutputTag("late")
events = [(1000, "a", 1), (2000, "a", 2), (10000, "a", 4), (5000, "a", 8),
          (7500, "a", 16), (3000, "b", 32), (8000, "b", 64), (20000, "c", 128)]
sessions = (env.from_collection(events)
            .assign_timestamps_and_watermarks(
                WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(0)).with_timestamp_assigner(lambda e, ts: e[0]))
            .key_by(lambda e: e[1])
            .window(EventTimeSessionWindows.with_gap(Time.milliseconds(3000)))
            .side_output_late_data(late)
            .process(SessionBounds()))
dropped = sessions.get_side_output(late).map(lambda e: ("late:" + e[1], e[0], 0, e[2], ""))
result = sessions.union(dropped)
