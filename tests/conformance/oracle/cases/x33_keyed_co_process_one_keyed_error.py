# A KeyedCoProcessFunction with only the first input keyed is rejected too.
env.set_parallelism(2)
class Both(KeyedCoProcessFunction):
    def process_element1(self, value, ctx, out): pass
    def process_element2(self, value, ctx, out): pass
a = env.from_sequence(1, 10)
b = env.from_collection([1, 2, 3])
a.key_by(lambda x: x % 2).connect(b).process(Both()).print()
