# BATCH mode: a non-chained *unspecified* forward edge becomes RESCALE/POINTWISE in the JobGraph.
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
env.set_parallelism(2)
(env.from_sequence(1, 10)
    .map(lambda x: x + 1).disable_chaining()
    .filter(lambda x: x % 2 == 0)
    .print())
