# STREAMING, p=2: a plain ProcessFunction on a KeyedStream keeps keyed state per key.
env.set_parallelism(2)


class Total(ProcessFunction):
    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total"))

    def process_element(self, value, ctx, out):
        t = (self.total.value() or 0) + value[2]
        self.total.update(t)
        out.collect((value[1], value[2], t))


events = [(1, "a", 1), (2, "b", 2), (3, "a", 3), (4, "c", 4), (5, "a", 5), (6, "b", 6)]
result = env.from_collection(events).key_by(lambda e: e[1]).process(Total())
