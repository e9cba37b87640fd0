# BATCH, keyed broadcast state: the broadcast (unkeyed) input is read first, whole, by every
# subtask; then the keyed input, sorted by key, sees every rule. The operator's parallelism
# is set (otherwise Flink's adaptive batch scheduler picks it).
env.set_parallelism(2)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
thresholds = MapStateDescriptor("thresholds", Types.STRING(), Types.LONG())


class Alert(KeyedBroadcastProcessFunction):
    def open(self, runtime_context):
        self.index = runtime_context.get_index_of_this_subtask()

    def process_element(self, value, ctx):
        limit = ctx.get_broadcast_state(thresholds).get(value[0])
        yield ("event", value[0], value[1], -1 if limit is None else limit, limit is not None and value[1] > limit)

    def process_broadcast_element(self, value, ctx):
        ctx.get_broadcast_state(thresholds).put(value[0], value[1])
        yield ("rule", self.index, value[0], value[1])


events = env.from_collection([("a", 5), ("b", 12), ("a", 15), ("c", 1), ("b", 8)])
rules = env.from_collection([("a", 10), ("b", 10)]).broadcast(thresholds)
result = events.key_by(lambda e: e[0]).connect(rules).process(Alert()).set_parallelism(2)
