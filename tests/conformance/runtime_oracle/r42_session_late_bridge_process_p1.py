# Session windows (gap 3 s): several late elements in a row are each dropped with their own
# window; the next element that is not late merges only with live sessions.
env.set_parallelism(1)


class SessionBounds(ProcessWindowFunction):
    def process(self, key, context, elements):
        stamps = sorted(e[0] for e in elements)
        yield (key, context.window().start, context.window().end, sum(e[2] for e in elements), str(stamps))


events = [(1000, "k", 1), (12000, "k", 2), (4000, "k", 4), (6000, "k", 8),
          (8500, "k", 16), (9500, "k", 32), (14500, "k", 64), (40000, "k", 128)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
          .key_by(lambda e: e[1])
          .window(EventTimeSessionWindows.with_gap(Time.milliseconds(3000)))
          .process(SessionBounds()))
