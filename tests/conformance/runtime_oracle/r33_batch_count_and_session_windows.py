# BATCH, p=2: per key, records arrive in timestamp order, so count windows group
# consecutive timestamps and out-of-order session elements merge as if in order.
env.set_parallelism(2)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)


class SessionBounds(ProcessWindowFunction):
    def process(self, key, context, elements):
        stamps = sorted(e[0] for e in elements)
        yield (key, context.window().start, context.window().end, sum(e[2] for e in elements), str(stamps))


events = [(9000, "a", 1), (1000, "a", 2), (5000, "b", 4), (2500, "a", 8),
          (12000, "a", 16), (1000, "b", 32), (7000, "a", 64), (3000, "b", 128)]
stamped = (env.from_collection(events)
           .assign_timestamps_and_watermarks(
               WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0])))
sessions = (stamped.key_by(lambda e: e[1])
            .window(EventTimeSessionWindows.with_gap(Time.milliseconds(3000)))
            .process(SessionBounds()))
counts = (stamped.key_by(lambda e: e[1])
          .count_window(2)
          .reduce(lambda x, y: (max(x[0], y[0]), x[1], x[2] + y[2]))
          .map(lambda e: ("count:" + e[1], e[0], 0, e[2], "")))
result = sessions.union(counts)
