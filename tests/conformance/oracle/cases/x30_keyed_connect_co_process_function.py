# Both inputs keyed, but a plain CoProcessFunction: the operator is "Co-Process".
env.set_parallelism(2)
class Both(CoProcessFunction):
    def process_element1(self, value, ctx, out): pass
    def process_element2(self, value, ctx, out): pass
a = env.from_sequence(1, 10)
b = env.from_collection([1, 2, 3])
a.key_by(lambda x: x % 3).connect(b.key_by(lambda x: x % 3)).process(Both()).print()
