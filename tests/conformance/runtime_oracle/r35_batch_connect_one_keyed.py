# BATCH, p=1, only the first input keyed: the unkeyed (pass-through) input is read first, in
# arrival order; then the keyed input, sorted by key and timestamp.
env.set_parallelism(1)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)


class Tag(CoProcessFunction):
    def process_element1(self, value, ctx, out):
        out.collect(("first", value[1], value[0], value[2]))

    def process_element2(self, value, ctx, out):
        out.collect(("second", value[1], value[0], value[2]))


strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0])
a = env.from_collection([(300, "b", 1), (100, "a", 2), (200, "b", 3), (400, "c", 4)]).assign_timestamps_and_watermarks(strategy)
b = (env.from_collection([(150, "b", 10), (50, "a", 20), (250, "c", 30), (120, "a", 40), (90, "d", 50)])
     .assign_timestamps_and_watermarks(strategy))
result = a.key_by(lambda e: e[1]).connect(b).process(Tag())
