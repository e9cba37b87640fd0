# BATCH: keyed first input, broadcast second input, explicit parallelism 2 on the
# Co-Flat Map and its map (they chain), then a keyed print sink.
env.set_parallelism(3)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
class Pass(CoFlatMapFunction):
    def flat_map1(self, value): return [value]
    def flat_map2(self, value): return [value]
a = env.from_collection([1, 2, 3])
b = env.from_sequence(1, 10)
(b.key_by(lambda x: x % 2)
  .connect(a.broadcast())
  .flat_map(Pass())
  .set_parallelism(2)
  .map(lambda x: x)
  .set_parallelism(2)
  .key_by(lambda x: x % 2)
  .print())
