# BATCH: the keyed broadcast operator reads sorted keyed input, so it heads its chain (HEAD);
# the unkeyed one does not. Exchanges are BLOCKING.
env.set_parallelism(2)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
class Forward(BroadcastProcessFunction):
    def process_element(self, value, ctx, out): pass
    def process_broadcast_element(self, value, ctx, out): pass
class KeyedForward(KeyedBroadcastProcessFunction):
    def process_element(self, value, ctx, out): pass
    def process_broadcast_element(self, value, ctx, out): pass
rules = MapStateDescriptor("rules", Types.STRING(), Types.LONG())
events = env.from_sequence(1, 10)
broadcast = env.from_sequence(1, 3).broadcast(rules)
events.key_by(lambda x: x % 2).connect(broadcast).process(KeyedForward()).print()
events.connect(broadcast).process(Forward()).print()
