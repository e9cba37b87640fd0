# A broadcast operator's parallelism, uid and name are its own: the unkeyed input at another
# parallelism is REBALANCEd, the broadcast input stays BROADCAST; the uid sets the hash.
env.set_parallelism(3)
class Forward(BroadcastProcessFunction):
    def process_element(self, value, ctx, out): pass
    def process_broadcast_element(self, value, ctx, out): pass
class KeyedForward(KeyedBroadcastProcessFunction):
    def process_element(self, value, ctx, out): pass
    def process_broadcast_element(self, value, ctx, out): pass
rules = MapStateDescriptor("rules", Types.STRING(), Types.LONG())
events = env.from_sequence(1, 10)
broadcast = env.from_sequence(1, 3).set_parallelism(1).broadcast(rules)
events.key_by(lambda x: x % 2).connect(broadcast).process(KeyedForward()).uid("rules-op").name("Apply rules").set_parallelism(2).print()
events.connect(broadcast).process(Forward()).set_parallelism(1).print()
