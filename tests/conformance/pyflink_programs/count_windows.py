# Count windows at parallelism 1: tumbling and sliding (slide < size, slide == size,
# slide > size) over three keys, tails shorter than the size at the end of input, with
# reduce, process (printing context.window()), apply and aggregate. Run on PyFlink 2.3.0 with
# "pyflink" for "flowmagic" in its imports, it printed count_windows.txt.
from flowmagic.common import Types
from flowmagic.datastream import StreamExecutionEnvironment, ProcessWindowFunction, WindowFunction
from flowmagic.datastream.functions import AggregateFunction
from flowmagic.datastream.window import CountWindow, CountTumblingWindowAssigner, CountSlidingWindowAssigner

ROWS = [("a", 1), ("b", 10), ("a", 2), ("c", 100), ("a", 3), ("b", 20), ("a", 4), ("a", 5),
        ("b", 30), ("c", 200), ("a", 6), ("b", 40), ("a", 7), ("c", 300), ("b", 50)]
ROW_TYPE = Types.TUPLE([Types.STRING(), Types.INT()])


class Describe(ProcessWindowFunction):
    def process(self, key, context, elements):
        window = context.window()
        yield (key, repr(window), str(window), window.max_timestamp(), [n for _, n in elements])


class Sum(WindowFunction):
    def apply(self, key, window: CountWindow, inputs):
        return [(key, window.id, window == CountWindow(window.id), sum(n for _, n in inputs))]


class Average(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + value[1], accumulator[1] + 1

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


class Labelled(ProcessWindowFunction):
    def process(self, key, context, averages):
        for average in averages:
            yield "%s %s %s" % (key, context.window(), average)


def job(title, build):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    print("--", title, flush=True)
    keyed = env.from_collection(ROWS, type_info=ROW_TYPE).key_by(lambda r: r[0], key_type=Types.STRING())
    build(keyed).print()
    env.execute(title)


def summed(a, b):
    return a[0], a[1] + b[1]


job("tumbling 3 reduce", lambda k: k.count_window(3).reduce(summed))
job("tumbling 3 process", lambda k: k.count_window(3).process(Describe()))
job("tumbling 2 apply", lambda k: k.count_window(2).apply(Sum()))
job("tumbling 2 aggregate", lambda k: k.count_window(2).aggregate(Average(), output_type=Types.DOUBLE()))
job("tumbling 2 aggregate with window function",
    lambda k: k.count_window(2).aggregate(Average(), Labelled(), output_type=Types.STRING()))
job("sliding 3 1 reduce", lambda k: k.count_window(3, 1).reduce(summed))
job("sliding 3 1 process", lambda k: k.count_window(3, 1).process(Describe()))
job("sliding 3 2 process", lambda k: k.count_window(3, 2).process(Describe()))
job("sliding 2 2 process", lambda k: k.count_window(2, 2).process(Describe()))
job("sliding 2 3 process", lambda k: k.count_window(2, 3).process(Describe()))
job("sliding 1 3 apply", lambda k: k.count_window(1, 3).apply(Sum()))
job("sliding 4 3 reduce with process", lambda k: k.count_window(4, 3).reduce(summed, Describe()))
job("sliding 3 1 aggregate", lambda k: k.count_window(3, 1).aggregate(Average(), output_type=Types.DOUBLE()))
job("window CountTumblingWindowAssigner 4", lambda k: k.window(CountTumblingWindowAssigner.of(4)).process(Describe()))
job("window CountSlidingWindowAssigner 2 1", lambda k: k.window(CountSlidingWindowAssigner.of(2, 1)).process(Describe()))
