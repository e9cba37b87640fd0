# ctx.timestamp() of records that have none: Long.MIN_VALUE in PyFlink (process, keyed and
# co-process functions). Run on PyFlink 2.3.0 with "pyflink" for "flowmagic" in its imports, it
# printed missing_timestamps.txt (the three sinks in some order).
from flowmagic.datastream import StreamExecutionEnvironment
from flowmagic.datastream.functions import ProcessFunction, KeyedProcessFunction, CoProcessFunction
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
class P(ProcessFunction):
    def process_element(self, value, ctx):
        yield ("process", value, ctx.timestamp())
class K(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield ("keyed", value, ctx.timestamp())
class C(CoProcessFunction):
    def process_element1(self, value, ctx):
        yield ("co1", value, ctx.timestamp())
    def process_element2(self, value, ctx):
        yield ("co2", value, ctx.timestamp())
ds = env.from_collection([1, 2])
ds.process(P()).print()
ds.key_by(lambda v: v).process(K()).print()
ds.connect(env.from_collection([3])).process(C()).print()
env.execute()
