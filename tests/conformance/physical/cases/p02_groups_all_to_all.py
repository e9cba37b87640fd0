# Three slot sharing groups joined by ALL_TO_ALL exchanges; the sink moves back to "default".
env.set_parallelism(3)
(env.from_sequence(1, 100).set_parallelism(1)
    .key_by(lambda x: x % 3).map(lambda x: x).set_parallelism(3).slot_sharing_group("a")
    .rebalance().map(lambda x: x).set_parallelism(5).slot_sharing_group("b")
    .shuffle().map(lambda x: x).set_parallelism(2)
    .print().set_parallelism(2).slot_sharing_group("default"))
