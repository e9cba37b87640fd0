# A user-defined Trigger (PyFlink's methods) with partitioned state and timers: fire and
# purge once the window's values reach 6, fire what is left at the window's end.


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
from flowmagic.datastream.window import Trigger, TriggerResult


class EveryN(Trigger):
    """Fires and purges once the window's values reach ``limit``, and fires at the window's end."""

    def __init__(self, limit):
        self.limit = limit
        self.total = ValueStateDescriptor("total", Types.INT())

    def on_element(self, element, timestamp, window, ctx):
        ctx.register_event_time_timer(window.max_timestamp())
        total = ctx.get_partitioned_state(self.total)
        value = (total.value() or 0) + element[2]
        if value >= self.limit:
            total.clear()
            return TriggerResult.FIRE_AND_PURGE
        total.update(value)
        return TriggerResult.CONTINUE

    def on_event_time(self, time, window, ctx):
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def on_processing_time(self, time, window, ctx):
        return TriggerResult.CONTINUE

    def clear(self, window, ctx):
        ctx.delete_event_time_timer(window.max_timestamp())
        ctx.get_partitioned_state(self.total).clear()


events = [("a", 500, 1), ("a", 1500, 2), ("b", 2000, 5), ("a", 3500, 3), ("a", 4200, 4),
          ("b", 6100, 1), ("a", 7000, 5), ("a", 9900, 6), ("b", 11000, 7), ("a", 12500, 8)]
keyed = (env.from_collection(events)
         .assign_timestamps_and_watermarks(
             WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(0)).with_timestamp_assigner(lambda e, ts: e[1]))
         .key_by(lambda t: t[0]))
result = keyed.window(TumblingEventTimeWindows.of(Time.seconds(10))).trigger(EveryN(6)).sum(2)
