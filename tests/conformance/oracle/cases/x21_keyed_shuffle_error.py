# shuffle() on a KeyedStream (after a map, p=3) is rejected like every other repartitioning.
env.set_parallelism(3)
env.from_sequence(1, 10).map(lambda x: x * 2).key_by(lambda x: x % 4).shuffle().print()
