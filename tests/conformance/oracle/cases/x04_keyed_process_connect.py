# Keyed connect + KeyedCoProcessFunction ("Co-Keyed-Process") and a KeyedProcessFunction ("KeyedProcess").
env.set_parallelism(2)
class PairUp(KeyedCoProcessFunction):
    def process_element1(self, value, ctx, out): out.collect("a%d" % value)
    def process_element2(self, value, ctx, out): out.collect("b%d" % value)
class Tag(KeyedProcessFunction):
    def process_element(self, value, ctx, out): out.collect("%s:%s" % (ctx.get_current_key(), value))
a = env.from_sequence(1, 10)
b = env.from_collection([1, 2, 3])
(a.key_by(lambda x: x % 3)
  .connect(b.key_by(lambda x: x % 3))
  .process(PairUp())
  .print())
(a.key_by(lambda x: x % 3)
  .process(Tag())
  .print())
