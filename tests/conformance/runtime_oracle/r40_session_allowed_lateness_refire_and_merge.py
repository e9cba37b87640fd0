# Session windows (gap 3 s) with allowed lateness 5 s: a late element merging with a fired
# session re-fires it at once; a later element bridging it to an open session merges both
# into one window that fires later; past the lateness, elements are dropped.
env.set_parallelism(1)


class SessionBounds(ProcessWindowFunction):
    def process(self, key, context, elements):
        stamps = sorted(e[0] for e in elements)
        yield (key, context.window().start, context.window().end, sum(e[2] for e in elements), str(stamps))


events = [(1000, "a", 1), (6000, "a", 2), (2500, "a", 4), (5800, "a", 8),
          (5400, "a", 16), (16000, "a", 32), (3000, "a", 64), (17000, "a", 128)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
          .key_by(lambda e: e[1])
          .window(EventTimeSessionWindows.with_gap(Time.milliseconds(3000)))
          .allowed_lateness(Time.milliseconds(5000))
          .process(SessionBounds()))
