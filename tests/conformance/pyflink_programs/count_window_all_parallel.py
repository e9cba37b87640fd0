# window_all at parallelism 2 and 3: PyFlink's is a keyed window (its input keyed by a constant
# 0) at the job's parallelism, so its one busy subtask is the one PyFlink routes the key 0 to,
# and the print sink after it is chained to it (every line printed by "1>"). Run on PyFlink
# 2.3.0 with "pyflink" for "flowmagic" in its imports, it printed count_window_all_parallel.txt.
from flowmagic.common import Types
from flowmagic.datastream import StreamExecutionEnvironment
from flowmagic.datastream.functions import ProcessAllWindowFunction
from flowmagic.datastream.window import CountSlidingWindowAssigner, CountTumblingWindowAssigner


class Describe(ProcessAllWindowFunction):
    def process(self, context, elements):
        yield "%s %s" % (context.window(), list(elements))


def job(title, parallelism, build):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    print("--", title, flush=True)
    build(env.from_collection(list(range(1, 12)), type_info=Types.INT())).print()
    env.execute(title)


job("p2 tumbling 3 process", 2, lambda ds: ds.window_all(CountTumblingWindowAssigner.of(3)).process(Describe(), Types.STRING()))
job("p3 sliding 3 2 process", 3, lambda ds: ds.window_all(CountSlidingWindowAssigner.of(3, 2)).process(Describe(), Types.STRING()))
job("p3 tumbling 4 reduce", 3, lambda ds: ds.window_all(CountTumblingWindowAssigner.of(4)).reduce(lambda a, b: a + b))
