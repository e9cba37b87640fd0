# BATCH mode: a keyed reduce emits only its final value per key; event-time tumbling windows
# all fire at the end of input (no progressive watermarks in BATCH).
env.set_parallelism(2)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
events = [(1000, "a", 1), (2000, "b", 2), (4000, "a", 4), (6000, "a", 8), (7000, "b", 16), (12000, "a", 32), (13000, "b", 64)]
keyed = (env.from_collection(events)
         .assign_timestamps_and_watermarks(
             WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
         .map(lambda e: (e[1], e[2]))
         .key_by(lambda t: t[0]))
totals = keyed.reduce(lambda a, b: (a[0], a[1] + b[1])).map(lambda t: ("reduce", t[0], t[1]))
windows = (keyed.window(TumblingEventTimeWindows.of(Time.seconds(5)))
           .sum(1)
           .map(lambda t: ("window", t[0], t[1])))
result = totals.union(windows)
