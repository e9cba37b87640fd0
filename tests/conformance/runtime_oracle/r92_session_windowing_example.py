# Flink's SessionWindowing example (flink-examples-streaming) over its built-in input: sessions
# of 3 ms per key, the count field summed; the watermark follows every element (ts - 1).
env.set_parallelism(1)
data = [("a", 1, 1), ("b", 1, 1), ("b", 3, 1), ("b", 5, 1), ("c", 6, 1), ("a", 10, 1), ("c", 11, 1)]
source = env.from_collection(data).assign_timestamps_and_watermarks(
    WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda value, ts: value[1]))
result = source.key_by(lambda value: value[0]).window(EventTimeSessionWindows.with_gap(Time.milliseconds(3))).sum(2)
