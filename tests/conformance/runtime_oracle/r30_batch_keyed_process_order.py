# BATCH, p=1: a keyed operator reads its input sorted by key, then by timestamp within a key.
env.set_parallelism(1)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)


class EmitOrder(KeyedProcessFunction):
    def process_element(self, value, ctx, out):
        out.collect((ctx.get_current_key(), ctx.timestamp(), value[2], ctx.timer_service().current_watermark()))


events = [(5000, "bb", 1), (1000, "a", 2), (3000, "ccc", 3), (4000, "a", 4), (2000, "bb", 5),
          (500, "b", 6), (6000, "aa", 7), (200, "a", 8), (2500, "ccc", 9), (100, "c", 10)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
          .key_by(lambda e: e[1])
          .process(EmitOrder()))
