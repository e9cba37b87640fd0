# broadcast() on a KeyedStream is rejected, even toward a wider consumer.
env.set_parallelism(1)
env.from_collection(["a", "b"]).key_by(lambda s: s).broadcast().map(lambda s: s).set_parallelism(2).print()
