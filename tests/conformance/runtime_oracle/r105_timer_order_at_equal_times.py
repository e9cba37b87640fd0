# Timers of many keys due at the same times fire in the order of Flink's timer heap (a binary
# heap ordered by timestamp alone), not in registration order: 13 keys register event-time
# timers at 10000, 11000 and 12000 and delete some, and all fire on the final watermark.
env.set_parallelism(1)
events = [("k%d" % (i * 7 % 13), i) for i in range(40)]


class Timers(KeyedProcessFunction):
    def process_element(self, value, ctx, out):
        i = value[1]
        ctx.timer_service().register_event_time_timer(10000 + (i % 3) * 1000)
        if i % 5 == 0:
            ctx.timer_service().delete_event_time_timer(10000 + ((i + 1) % 3) * 1000)

    def on_timer(self, timestamp, ctx, out):
        out.collect(f"{ctx.get_current_key()}@{timestamp}")


result = env.from_collection(events).key_by(lambda e: e[0]).process(Timers())
