# partition_custom (CUSTOM, all-to-all, a plain partition node: no key-extractor map) and broadcast.
env.set_parallelism(2)
class ModPartitioner(Partitioner):
    def partition(self, key, num_partitions): return key % num_partitions
s = env.from_sequence(1, 10)
s.partition_custom(ModPartitioner(), lambda x: x % 5).map(lambda x: x).print()
s.broadcast().map(lambda x: x + 1).set_parallelism(3).print()
