# BATCH, p=1, both inputs keyed: the two sorted inputs are merged by key (then timestamp),
# and a key's timers fire before the next key's records.
env.set_parallelism(1)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)


class Both(KeyedCoProcessFunction):
    def process_element1(self, value, ctx, out):
        ctx.timer_service().register_event_time_timer(value[0] + 1000)
        out.collect(("first", value[1], value[0], value[2]))

    def process_element2(self, value, ctx, out):
        out.collect(("second", value[1], value[0], value[2]))

    def on_timer(self, timestamp, ctx, out):
        out.collect(("timer", ctx.get_current_key(), timestamp, 0))


strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0])
a = env.from_collection([(300, "b", 1), (100, "a", 2), (200, "b", 3), (400, "c", 4)]).assign_timestamps_and_watermarks(strategy)
b = (env.from_collection([(150, "b", 10), (50, "a", 20), (250, "c", 30), (120, "a", 40), (90, "d", 50)])
     .assign_timestamps_and_watermarks(strategy))
result = a.key_by(lambda e: e[1]).connect(b.key_by(lambda e: e[1])).process(Both())
