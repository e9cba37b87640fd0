# The broadcast state pattern, one BroadcastStream connected twice: to an unkeyed stream
# ("Co-Process-Broadcast") and to a KeyedStream ("Co-Process-Broadcast-Keyed"). Input 2 is
# the broadcast side, a BROADCAST edge; the operators chain with what follows them.
env.set_parallelism(2)
class Forward(BroadcastProcessFunction):
    def process_element(self, value, ctx, out): pass
    def process_broadcast_element(self, value, ctx, out): pass
class KeyedForward(KeyedBroadcastProcessFunction):
    def process_element(self, value, ctx, out): pass
    def process_broadcast_element(self, value, ctx, out): pass
rules = MapStateDescriptor("rules", Types.STRING(), Types.LONG())
events = env.from_sequence(1, 10).map(lambda x: x)
broadcast = env.from_sequence(1, 3).broadcast(rules)
events.connect(broadcast).process(Forward()).print()
events.key_by(lambda x: x % 2).connect(broadcast).process(KeyedForward()).map(lambda x: x).print()
