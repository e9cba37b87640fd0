# PurgingTrigger.of(ContinuousEventTimeTrigger.of(3 s)): every firing empties the window.


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
from flowmagic.datastream.window import ContinuousEventTimeTrigger, PurgingTrigger

events = [("a", 500, 1), ("a", 1500, 2), ("b", 2000, 5), ("a", 3500, 3), ("a", 4200, 4),
          ("b", 6100, 1), ("a", 7000, 5), ("a", 9900, 6), ("b", 11000, 7), ("a", 12500, 8)]
keyed = (env.from_collection(events)
         .assign_timestamps_and_watermarks(
             WatermarkStrategy.for_generator(lambda context: PerRecordWatermarks(0)).with_timestamp_assigner(lambda e, ts: e[1]))
         .key_by(lambda t: t[0]))
result = (keyed.window(TumblingEventTimeWindows.of(Time.seconds(10)))
          .trigger(PurgingTrigger.of(ContinuousEventTimeTrigger.of(Time.seconds(3))))
          .sum(2))
