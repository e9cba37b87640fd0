# r04's program with a map that takes 300 ms per record before the timestamp assigner: the
# periodic watermarks (every 200 ms of processing time) arrive between records, so each
# window fires as soon as the watermark passes its end, in this order (r04, read in one go,
# fires every window at the end of input).
import time


def slowly(event):
    time.sleep(0.3)
    return event


env.set_parallelism(1)
events = [(1000, "a", 1), (2000, "b", 1), (9999, "a", 1), (10000, "a", 1), (15000, "b", 1), (21000, "a", 1), (29999, "b", 1)]
result = (env.from_collection(events)
          .map(slowly)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
          .map(lambda e: (e[1], e[2]))
          .key_by(lambda t: t[0])
          .window(TumblingEventTimeWindows.of(Time.seconds(10)))
          .sum(1)
          .map(lambda t: ("window", t[0], t[1])))
