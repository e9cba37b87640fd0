# forward() on a KeyedStream is rejected (not only when parallelism changes).
env.set_parallelism(2)
env.from_sequence(1, 10).key_by(lambda x: x % 2).forward().map(lambda x: x).print()
