# BATCH: with one keyed input the two-input operator is not sorted and keeps ALWAYS
# chaining; with both keyed it gets sorted inputs and HEAD.
env.set_parallelism(2)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
class Pass(CoMapFunction):
    def map1(self, value): return value
    def map2(self, value): return value
a = env.from_sequence(1, 10).map(lambda x: x + 1)
b = env.from_sequence(1, 10)
a.connect(b.key_by(lambda x: x % 2)).map(Pass()).filter(lambda x: x > 2).print()
a.key_by(lambda x: x % 2).connect(b.key_by(lambda x: x % 2)).map(Pass()).filter(lambda x: x > 2).print()
