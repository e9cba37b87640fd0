# BATCH, p=1: a keyed reduce emits one result per key, in the order of the sorted keys, and
# folds each key's records in timestamp order (non-ASCII and different-length string keys).
env.set_parallelism(1)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
events = [(40, "zz", 1), (30, "é", 2), (20, "a", 3), (10, "zz", 4), (5, "Z", 5),
          (50, "é", 6), (1, "a", 7), (60, "ab", 8), (15, "Z", 9), (25, "ü", 10)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
          .map(lambda e: (e[1], str(e[2])))
          .key_by(lambda t: t[0])
          .reduce(lambda x, y: (x[0], x[1] + "," + y[1])))
