# partition_custom() on a KeyedStream is rejected: it would override the key partitioning.
env.set_parallelism(2)
class ModPartitioner(Partitioner):
    def partition(self, key, num_partitions): return key % num_partitions
env.from_sequence(1, 10).key_by(lambda x: x % 2).partition_custom(ModPartitioner(), lambda x: x).print()
