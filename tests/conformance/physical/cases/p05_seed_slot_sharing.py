# The seed's slot sharing example: flat_map in "flatmap_sg" at parallelism 4, sum in "sum_sg" at 3.
env.set_parallelism(4)
(env.from_collection(["to be or not to be", "that is the question"]).set_parallelism(1)
    .flat_map(lambda line: [(word, 1) for word in line.split(" ")],
              output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
    .set_parallelism(4).slot_sharing_group("flatmap_sg")
    .key_by(lambda t: t[0])
    .sum(1).set_parallelism(3).slot_sharing_group("sum_sg")
    .print())
