# cache() in BATCH: a CacheWrite vertex (HEAD) reads the cached source through a persistent blocking partition;
# the cached stream's consumers read the source itself.
from flowmagic.datastream.connectors.number_seq import NumberSequenceSource

env.set_runtime_mode(RuntimeExecutionMode.BATCH)
env.set_parallelism(2)
cached = env.from_source(NumberSequenceSource(1, 6), WatermarkStrategy.no_watermarks(), "numbers").cache()
cached.print()
cached.rebalance().print()
