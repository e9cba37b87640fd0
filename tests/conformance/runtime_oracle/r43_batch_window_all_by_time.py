# BATCH, p=2: window_all keys the stream by a constant, so in BATCH its one key's records
# are sorted by timestamp: count windows of 3 take the three earliest, then the next three.
env.set_parallelism(2)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
events = [(5000, "e", 1), (1000, "a", 2), (4000, "d", 3), (2000, "b", 4), (7000, "g", 5), (3000, "c", 6), (6000, "f", 7)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
          .count_window_all(3)
          .reduce(lambda x, y: (max(x[0], y[0]), x[1] + y[1], x[2] + y[2])))
