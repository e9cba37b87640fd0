# disable_chaining() splits a chain of equal parallelism: the parts still share one slot per subtask index.
env.set_parallelism(3)
(env.from_sequence(1, 100)
    .map(lambda x: x)
    .map(lambda x: x).disable_chaining()
    .filter(lambda x: x > 1)
    .print())
