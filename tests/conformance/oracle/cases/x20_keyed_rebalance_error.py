# A KeyedStream keeps its HASH partitioning: rebalance() on it is rejected when called.
env.set_parallelism(2)
env.from_sequence(1, 10).key_by(lambda x: x % 3).rebalance().map(lambda x: x).print()
