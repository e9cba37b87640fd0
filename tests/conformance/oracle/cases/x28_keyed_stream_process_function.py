# On a KeyedStream, a plain ProcessFunction makes a "Process" operator (keyed state, no
# key in its context); a KeyedProcessFunction makes "KeyedProcess".
env.set_parallelism(2)
class Plain(ProcessFunction):
    def process_element(self, value, ctx, out): pass
class Keyed(KeyedProcessFunction):
    def process_element(self, value, ctx, out): pass
keyed = env.from_sequence(1, 10).key_by(lambda x: x % 3)
keyed.process(Plain()).print()
keyed.process(Keyed()).print()
