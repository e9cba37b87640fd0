# global() on a KeyedStream is rejected in BATCH too (the check is in the API call).
env.set_parallelism(4)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
env.from_sequence(1, 10).key_by(lambda x: x % 2).global_().print()
