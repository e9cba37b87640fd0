# What is allowed on a KeyedStream: key_by again (a new HASH partition), and repartitioning
# the output of an operator applied to it (rebalance, broadcast).
env.set_parallelism(3)
keyed = env.from_sequence(1, 30).key_by(lambda x: x % 5)
keyed.key_by(lambda x: x % 2).sum(0).print()
keyed.map(lambda x: x + 1).rebalance().map(lambda x: x - 1).set_parallelism(2).print()
keyed.reduce(lambda x, y: x + y).broadcast().print()
