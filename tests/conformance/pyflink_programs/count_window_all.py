# PyFlink's count window assigners on a whole stream (window_all), whose one subtask counts
# every element (count_window_all_parallel.py: the same at parallelism 2 and 3). Run on
# PyFlink 2.3.0 with "pyflink" for "flowmagic" in its imports, it printed count_window_all.txt.
from flowmagic.common import Types
from flowmagic.datastream import StreamExecutionEnvironment
from flowmagic.datastream.functions import ProcessAllWindowFunction, AllWindowFunction
from flowmagic.datastream.window import CountTumblingWindowAssigner, CountSlidingWindowAssigner


class Describe(ProcessAllWindowFunction):
    def process(self, context, elements):
        yield "%s %s" % (context.window(), list(elements))


class Total(AllWindowFunction):
    def apply(self, window, inputs):
        return ["%s %s" % (window, sum(inputs))]


def job(title, build):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    print("--", title, flush=True)
    build(env.from_collection(list(range(1, 12)), type_info=Types.INT())).print()
    env.execute(title)


job("tumbling 3 process", lambda ds: ds.window_all(CountTumblingWindowAssigner.of(3)).process(Describe(), Types.STRING()))
job("sliding 3 2 apply", lambda ds: ds.window_all(CountSlidingWindowAssigner.of(3, 2)).apply(Total(), Types.STRING()))
job("sliding 2 4 reduce", lambda ds: ds.window_all(CountSlidingWindowAssigner.of(2, 4)).reduce(lambda a, b: a + b))
