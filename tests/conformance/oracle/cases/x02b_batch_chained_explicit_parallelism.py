# BATCH mode: one explicitly-set operator inside a chain makes the whole vertex's parallelism fixed.
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
env.set_parallelism(2)
(env.from_sequence(1, 100)
    .map(lambda x: x + 1).set_parallelism(2)
    .filter(lambda x: x > 0)
    .print())
