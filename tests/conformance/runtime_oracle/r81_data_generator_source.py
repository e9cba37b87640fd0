# DataGeneratorSource at parallelism 3: records 0..19 of a generator function, each reader a
# contiguous range of indices (as Flink splits its number sequence).
from flowmagic.datastream.connectors.datagen import DataGeneratorSource, GeneratorFunction

env.set_parallelism(3)


class Squares(GeneratorFunction):
    def map(self, index):
        return index * index


ds = env.from_source(DataGeneratorSource(Squares(), 20, Types.LONG()), WatermarkStrategy.no_watermarks(), "squares")
result = ds.map(lambda v: (v % 3, v))
