# BATCH mode (dynamic graph): only an operator with an explicit parallelism keeps it in the JobGraph.
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
env.set_parallelism(2)
(env.from_sequence(1, 100)
    .map(lambda x: (x % 10, 1)).set_parallelism(3)
    .key_by(lambda t: t[0])
    .sum(1)
    .print())
