# BATCH, p=1, int keys: a key's event-time timers fire (watermark MAX) as soon as the sorted
# input moves on to the next key, before that key's first record (watermark MIN again).
env.set_parallelism(1)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)


class Timers(KeyedProcessFunction):
    def process_element(self, value, ctx, out):
        ctx.timer_service().register_event_time_timer(value[0] + 100)
        out.collect(("element", ctx.get_current_key(), ctx.timestamp(), ctx.timer_service().current_watermark()))

    def on_timer(self, timestamp, ctx, out):
        out.collect(("timer", ctx.get_current_key(), timestamp, ctx.timer_service().current_watermark()))


events = [(3000, 2), (1000, -1), (2000, 300), (500, 0), (4000, -300), (1500, 2), (700, -1), (900, 1)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
          .key_by(lambda e: e[1])
          .process(Timers()))
