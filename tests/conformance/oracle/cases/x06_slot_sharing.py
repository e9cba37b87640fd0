# Explicit slot sharing groups split chains; downstream operators inherit their inputs' group.
env.set_parallelism(4)
(env.from_collection(["a b", "c d"])
    .flat_map(lambda s: [(w, 1) for w in s.split(" ")])
    .map(lambda t: t).set_parallelism(4).slot_sharing_group("flatmap_sg")
    .key_by(lambda t: t[0])
    .count_window(10, 5).sum(1).set_parallelism(3).slot_sharing_group("sum_sg")
    .print().set_parallelism(3))
