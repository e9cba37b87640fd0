# BATCH, p=1, only the second input keyed (Co-Map): the first (pass-through) input is read
# first, then the second, sorted by key and timestamp.
env.set_parallelism(1)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0])
a = env.from_collection([(300, "b", 1), (100, "a", 2), (200, "b", 3), (400, "c", 4)]).assign_timestamps_and_watermarks(strategy)
b = (env.from_collection([(150, "b", 10), (50, "a", 20), (250, "c", 30), (120, "a", 40), (90, "d", 50)])
     .assign_timestamps_and_watermarks(strategy))
result = a.connect(b.key_by(lambda e: e[1])).map(lambda e: ("first", e[1], e[0], e[2]),
                                                  lambda e: ("second", e[1], e[0], e[2]))
