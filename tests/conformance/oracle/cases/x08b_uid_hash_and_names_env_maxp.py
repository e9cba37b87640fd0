# As x08, with env.set_max_parallelism(256): every node without its own max parallelism gets 256.
env.set_parallelism(2)
env.set_max_parallelism(256)
(env.from_sequence(1, 10).slot_sharing_group("src_sg")
    .map(lambda x: x + 1).name("my map").uid("u1").set_max_parallelism(64)
    .filter(lambda x: x > 0).set_uid_hash("0123456789abcdef0123456789abcdef")
    .map(lambda x: x).set_description("my description")
    .print().name("my sink"))
