# Connected streams with one keyed input (either side): a plain two-input operator with no
# state keys ("Co-Map", "Co-Process"); the other input keeps its own partitioning.
env.set_parallelism(2)
class Pass(CoMapFunction):
    def map1(self, value): return value
    def map2(self, value): return value
class Both(CoProcessFunction):
    def process_element1(self, value, ctx, out): pass
    def process_element2(self, value, ctx, out): pass
a = env.from_sequence(1, 10).map(lambda x: x + 1)
b = env.from_sequence(1, 10)
a.connect(b.key_by(lambda x: x % 2)).map(Pass()).map(lambda x: x).print()
b.key_by(lambda x: x % 3).connect(a).process(Both()).print()
