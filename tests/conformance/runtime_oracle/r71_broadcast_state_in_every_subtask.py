# STREAMING, unkeyed broadcast state: every subtask receives every broadcast record, in order,
# and keeps its own copy of the state (its size grows the same in both subtasks). How the two
# inputs interleave is not deterministic, so the other side's records do not read the state.
env.set_parallelism(2)
thresholds = MapStateDescriptor("thresholds", Types.STRING(), Types.LONG())


class Count(BroadcastProcessFunction):
    def open(self, runtime_context):
        self.index = runtime_context.get_index_of_this_subtask()

    def process_element(self, value, ctx, out):
        out.collect(("event", value * 10))

    def process_broadcast_element(self, value, ctx, out):
        state = ctx.get_broadcast_state(thresholds)
        state.put(value[0], value[1])
        out.collect(("rule", self.index, value[0], len(list(state.items()))))


events = env.from_collection([1, 2, 3, 4])
rules = env.from_collection([("x", 1), ("y", 2), ("x", 3)]).broadcast(thresholds)
result = events.connect(rules).process(Count())
