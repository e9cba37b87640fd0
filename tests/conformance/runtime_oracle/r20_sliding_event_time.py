# Sliding event-time windows (10 s size, 5 s slide), sum per key; every element is in two windows.
env.set_parallelism(1)
events = [(1000, "a", 1), (3000, "b", 2), (6000, "a", 3), (7000, "b", 4), (12000, "a", 5), (16000, "b", 6)]
result = (env.from_collection(events)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[0]))
          .map(lambda e: (e[1], e[2]))
          .key_by(lambda t: t[0])
          .window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5)))
          .sum(1))
