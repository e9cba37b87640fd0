# BATCH: every operator applied directly to a KeyedStream has a sorted keyed input and heads
# its chain (map, flat_map), including a print sink on the KeyedStream; a filter after the
# map does not.
env.set_parallelism(2)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
keyed = env.from_sequence(1, 10).key_by(lambda x: x % 3)
keyed.map(lambda x: x).filter(lambda x: x > 1).print()
keyed.flat_map(lambda x: [x]).print()
keyed.print()
