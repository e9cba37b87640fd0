# BATCH, p=1: when the sorted input moves on to the next key, the key's event-time timers
# fire first, then its processing-time timers (registered here at a fixed far-future time).
env.set_parallelism(1)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)


class Timers(KeyedProcessFunction):
    def process_element(self, value, ctx, out):
        ctx.timer_service().register_processing_time_timer(4102444800000)
        ctx.timer_service().register_event_time_timer(value[0] + 5)
        out.collect(("element", ctx.get_current_key()))

    def on_timer(self, timestamp, ctx, out):
        out.collect(("timer %d" % timestamp, ctx.get_current_key()))


events = [(300, "b", 1), (100, "a", 2), (200, "b", 3), (50, "c", 4)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
          .key_by(lambda e: e[1])
          .process(Timers()))
