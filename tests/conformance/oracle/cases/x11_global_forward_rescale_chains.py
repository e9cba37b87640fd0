# rescale (pointwise 3->6), forward chain at 6, global into a p=2 sink.
env.set_parallelism(3)
(env.from_sequence(1, 10)
    .rescale().map(lambda x: x).set_parallelism(6)
    .forward().filter(lambda x: True).set_parallelism(6)
    .global_().print().set_parallelism(2))
