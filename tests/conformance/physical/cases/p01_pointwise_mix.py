# rescale up and down (2 -> 4 -> 2 -> 6): pointwise consumers share their producer's slot where they can.
env.set_parallelism(4)
(env.from_sequence(1, 100).set_parallelism(2)
    .rescale().map(lambda x: x).set_parallelism(4)
    .rescale().map(lambda x: x).set_parallelism(2)
    .rescale().map(lambda x: x).set_parallelism(6)
    .print().set_parallelism(6))
