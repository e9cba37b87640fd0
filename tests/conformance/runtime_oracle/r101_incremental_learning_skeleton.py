# Flink's IncrementalLearningSkeleton example (flink-examples-streaming): a model rebuilt per
# 5 s event-time window of training data, connected to new data for predictions (0 per new
# record, 1 per model update). Its sources are finite SourceFunctions of 8200 and 50 ones;
# here they are collections of the same records (flowmagic runs no SourceFunction). The
# training data's punctuated assigner stamps 10, 20, 30 ... and emits (timestamp - 1) after
# every record: here a counting TimestampAssigner and a punctuated WatermarkGenerator. Recorded with the Java program on flink-dist 2.3.0 (2 cores).


from flowmagic.common.watermark_strategy import TimestampAssigner
from flowmagic.datastream.functions import ProcessAllWindowFunction


class LinearTimestamp(TimestampAssigner):
    def __init__(self):
        self.counter = 0

    def extract_timestamp(self, value, record_timestamp):
        self.counter += 10
        return self.counter


class LinearWatermarks(WatermarkGenerator):
    def on_event(self, event, event_timestamp, output):
        output.emit_watermark(Watermark(event_timestamp - 1))


# Java's AllWindowFunction (apply); flowmagic has its process() form, of the same output.
class PartialModelBuilder(ProcessAllWindowFunction):
    def process(self, context, elements):
        yield [1.0]


class Predictor(CoMapFunction):
    def __init__(self):
        self.batch_model = None
        self.partial_model = None

    def map1(self, value):
        return 0

    def map2(self, value):
        self.partial_model = value
        self.batch_model = [0.0]
        return 1


env.set_parallelism(2)
training_data = env.from_collection([1] * 8200)
new_data = env.from_collection([1] * 50)
model = (
    training_data.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_generator(lambda context: LinearWatermarks()).with_timestamp_assigner(LinearTimestamp())
    )
    .window_all(TumblingEventTimeWindows.of(Time.milliseconds(5000)))
    .process(PartialModelBuilder())
)
result = new_data.connect(model).map(Predictor())
