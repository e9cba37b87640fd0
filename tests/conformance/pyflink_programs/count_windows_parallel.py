# Count windows at parallelism 2 over six keys (typed, so each key goes to PyFlink's subtask):
# tumbling with reduce and sliding with process. Run on PyFlink 2.3.0 with "pyflink" for
# "flowmagic" in its imports, it printed count_windows_parallel.txt.
from flowmagic.common import Types
from flowmagic.datastream import StreamExecutionEnvironment, ProcessWindowFunction

KEYS = ["a", "b", "c", "d", "e", "f"]
ROWS = [(KEYS[(i * 7 + i // 3) % len(KEYS)], i) for i in range(40)]
ROW_TYPE = Types.TUPLE([Types.STRING(), Types.INT()])


class Describe(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield "%s %s %s" % (key, context.window(), [n for _, n in elements])


def job(title, build):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    print("--", title, flush=True)
    keyed = env.from_collection(ROWS, type_info=ROW_TYPE).key_by(lambda r: r[0], key_type=Types.STRING())
    build(keyed).print()
    env.execute(title)


job("tumbling 3 reduce", lambda k: k.count_window(3).reduce(lambda a, b: (a[0], a[1] + b[1])))
job("sliding 4 2 process", lambda k: k.count_window(4, 2).process(Describe(), Types.STRING()))
job("sliding 2 5 process", lambda k: k.count_window(2, 5).process(Describe(), Types.STRING()))
