# Event-time session windows (gap 3 s) per key; reduce to (key, first ts, last ts, count).
env.set_parallelism(1)
events = [(1000, "a"), (1500, "b"), (2000, "a"), (4500, "a"), (5000, "b"), (6000, "b"), (8000, "c"), (9000, "a"), (10000, "a")]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
          .map(lambda e: (e[1], e[0], e[0], 1))
          .key_by(lambda t: t[0])
          .window(EventTimeSessionWindows.with_gap(Time.seconds(3)))
          .reduce(lambda a, b: (a[0], min(a[1], b[1]), max(a[2], b[2]), a[3] + b[3])))
