# KeyedProcessFunction: count per key in ValueState, event-time timer at ts + 1000 (deduplicated
# per key and time), emitting (key, count at firing time, timer time) when it fires.


class PerRecordWatermarks(WatermarkGenerator):
    """The Java twin's punctuated generator: after every record, the highest timestamp seen
    less the lag less 1 ms (Flink's built-in generators emit every 200 ms of wall-clock time)."""

    def __init__(self, lag_ms):
        self.lag_ms = lag_ms
        self.max_timestamp = None

    def on_event(self, event, event_timestamp, output):
        if self.max_timestamp is None or event_timestamp > self.max_timestamp:
            self.max_timestamp = event_timestamp
        output.emit_watermark(Watermark(self.max_timestamp - self.lag_ms - 1))


env.set_parallelism(1)


class CountWithTimer(KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))

    def process_element(self, value, ctx, out):
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)

    def on_timer(self, timestamp, ctx, out):
        out.collect((ctx.get_current_key(), self.count.value(), timestamp))


events = [(1000, "a"), (1000, "a"), (1200, "b"), (1800, "a"), (2100, "b"), (2500, "c"), (3000, "a")]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(0)).with_timestamp_assigner(lambda e, ts: e[0]))
          .key_by(lambda e: e[1])
          .process(CountWithTimer()))
