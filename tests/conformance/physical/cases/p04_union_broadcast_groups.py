# A union of two sources in different slot sharing groups, then a broadcast.
env.set_parallelism(2)
first = env.from_sequence(1, 10)
second = env.from_sequence(1, 10).set_parallelism(1).slot_sharing_group("side")
(first.union(second).map(lambda x: x).set_parallelism(4).slot_sharing_group("u")
    .broadcast().map(lambda x: x).set_parallelism(3)
    .print())
