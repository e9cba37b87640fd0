# BATCH, p=1: a map applied to a KeyedStream also reads sorted input; a plain ProcessFunction
# on a KeyedStream ("Process") has keyed state and sorted input too.
env.set_parallelism(1)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)


class Count(ProcessFunction):
    def open(self, runtime_context):
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen"))

    def process_element(self, value, ctx, out):
        n = (self.seen.value() or 0) + 1
        self.seen.update(n)
        out.collect(("process", value[1], n))


keyed = (env.from_collection([(30, "bb", 1), (10, "c", 2), (20, "a", 3), (5, "bb", 4), (15, "c", 5), (1, "aaa", 6)])
         .assign_timestamps_and_watermarks(
             WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
         .key_by(lambda e: e[1]))
result = keyed.map(lambda e: ("map", e[1], e[2])).union(keyed.process(Count()))
