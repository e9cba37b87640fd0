# Session windows (gap 3 s): several late elements in a row are each dropped with their own
# window; the next element that is not late merges only with live sessions.


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


events = [(1000, "k", 1), (12000, "k", 2), (4000, "k", 4), (6000, "k", 8),
          (8500, "k", 16), (9500, "k", 32), (14500, "k", 64), (40000, "k", 128)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(0)).with_timestamp_assigner(lambda e, ts: e[0]))
          .key_by(lambda e: e[1])
          .window(EventTimeSessionWindows.with_gap(Time.milliseconds(3000)))
          .process(SessionBounds()))
