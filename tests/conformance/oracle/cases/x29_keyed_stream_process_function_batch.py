# BATCH: a ProcessFunction on a KeyedStream is named "Process" but still has a keyed
# (sorted) input, so it heads its chain; the map after it chains.
env.set_parallelism(3)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
class Plain(ProcessFunction):
    def process_element(self, value, ctx, out): pass
(env.from_sequence(1, 10)
    .key_by(lambda x: x % 3)
    .process(Plain())
    .map(lambda x: x)
    .print())
