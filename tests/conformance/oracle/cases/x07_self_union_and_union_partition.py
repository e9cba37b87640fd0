# Self-union (two parallel edges, so the map cannot chain), union + rebalance, and start_new_chain.
env.set_parallelism(2)
s = env.from_sequence(1, 10)
s.union(s).map(lambda x: x + 1).print()
a = env.from_collection([1, 2, 3])
b = env.from_sequence(10, 20)
a.union(b).rebalance().map(lambda x: x * 2).print()
s.map(lambda x: x * 3).start_new_chain().filter(lambda x: x > 0).print()
