# x81 in BATCH mode: the same evicting windows after sorted keyed inputs.
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
from flowmagic.datastream.window import CountEvictor, DeltaFunction, DeltaTrigger, TimeEvictor
env.set_parallelism(2)
class DistanceDriven(DeltaFunction):
    def get_delta(self, old, new): return new[2] - old[2]
class SumSpeeds(WindowFunction):
    def apply(self, key, window, inputs): return [key]
car_type = Types.TUPLE([Types.INT(), Types.INT(), Types.DOUBLE(), Types.LONG()])
keyed = (env.from_collection([(0, 55, 15.27, 1424951918630), (1, 45, 12.5, 1424951918632)], type_info=car_type)
    .assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda c, ts: c[3]))
    .key_by(lambda c: c[0]))
(keyed.window(GlobalWindows.create())
    .evictor(TimeEvictor.of(Time.seconds(10)))
    .trigger(DeltaTrigger.of(50.0, DistanceDriven(), car_type))
    .max_by(1)
    .print())
(keyed.window(TumblingEventTimeWindows.of(Time.seconds(10)))
    .evictor(CountEvictor.of(2, True))
    .apply(SumSpeeds())
    .print())
