# A slot sharing group used twice along the pipeline, with "default" in between.
env.set_parallelism(2)
(env.from_sequence(1, 100).set_parallelism(3)
    .rescale().map(lambda x: x).set_parallelism(6).slot_sharing_group("wide")
    .rescale().map(lambda x: x).set_parallelism(2).slot_sharing_group("default")
    .rebalance().map(lambda x: x).set_parallelism(4).slot_sharing_group("wide")
    .print().set_parallelism(4))
