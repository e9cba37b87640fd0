# r102 with a map that takes 300 ms per record before the timestamp assigner: the periodic
# generator (every 200 ms of processing time) now emits between records, so late records
# are late as with a watermark after every record (r22).
import time


def slowly(event):
    time.sleep(0.3)
    return event


env.set_parallelism(1)
late = OutputTag("late")
events = [(1000, "a", 1), (2000, "a", 2), (6000, "a", 10), (3000, "a", 4), (7500, "a", 20),
          (4000, "a", 8), (11000, "a", 1), (9000, "a", 5), (14000, "a", 1), (9500, "a", 3)]
sums = (env.from_collection(events)
        .map(slowly)
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0))
            .with_timestamp_assigner(lambda e, ts: e[0]))
        .map(lambda e: (e[1], e[2]))
        .key_by(lambda t: t[0])
        .window(TumblingEventTimeWindows.of(Time.seconds(5)))
        .allowed_lateness(Time.seconds(2))
        .side_output_late_data(late)
        .sum(1))
result = (sums.map(lambda t: ("main", t[0], t[1]))
          .union(sums.get_side_output(late).map(lambda t: ("late", t[0], t[1]))))
