# A ProcessAllWindowFunction with window_state() (firings of each window, dropped by
# clear(context) when the window goes) and global_state() (all firings).


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


env.set_parallelism(2)
from flowmagic.datastream.functions import ProcessAllWindowFunction
from flowmagic.datastream.window import ContinuousEventTimeTrigger


class Firings(ProcessAllWindowFunction):
    def __init__(self):
        self.firings = ValueStateDescriptor("firings", Types.INT())
        self.total = ValueStateDescriptor("total", Types.INT())

    def process(self, context, elements):
        firings = context.window_state().get_state(self.firings)
        total = context.global_state().get_state(self.total)
        firings.update((firings.value() or 0) + 1)
        total.update((total.value() or 0) + 1)
        return [(context.window().start, firings.value(), total.value(), len(list(elements)))]

    def clear(self, context):
        context.window_state().get_state(self.firings).clear()


events = [("a", 1000), ("b", 1500), ("c", 2600), ("a", 3200), ("b", 4000),
          ("a", 11000), ("b", 12000), ("c", 13000), ("a", 25000)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(0)).with_timestamp_assigner(lambda e, ts: e[1]))
          .window_all(TumblingEventTimeWindows.of(Time.seconds(10)))
          .trigger(ContinuousEventTimeTrigger.of(Time.seconds(2)))
          .process(Firings()))
