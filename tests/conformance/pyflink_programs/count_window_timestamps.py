# The timestamp a count window's results carry: the element that fired the window's (a
# ProcessFunction after the window prints ctx.timestamp()). Run on PyFlink 2.3.0 with "pyflink"
# for "flowmagic" in its imports, it printed count_window_timestamps.txt.
from flowmagic.common import Types, WatermarkStrategy
from flowmagic.common.watermark_strategy import TimestampAssigner
from flowmagic.datastream import StreamExecutionEnvironment, ProcessFunction

ROWS = [("a", 1), ("b", 2), ("a", 3), ("a", 4), ("b", 5), ("a", 6), ("b", 7)]
ROW_TYPE = Types.TUPLE([Types.STRING(), Types.INT()])


class Stamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1] * 1000


class Timestamp(ProcessFunction):
    def process_element(self, value, ctx):
        yield "%s at %s" % (value, ctx.timestamp())


def job(title, size, slide=0):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    print("--", title, flush=True)
    ds = env.from_collection(ROWS, type_info=ROW_TYPE).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Stamp()))
    ds.key_by(lambda r: r[0], key_type=Types.STRING()).count_window(size, slide) \
        .reduce(lambda a, b: (a[0], a[1] + b[1])).process(Timestamp(), Types.STRING()).print()
    env.execute(title)


job("tumbling 2", 2)
job("sliding 3 1", 3, 1)
