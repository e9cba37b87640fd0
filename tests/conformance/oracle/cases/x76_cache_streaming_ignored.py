# cache() in STREAMING adds nothing to the graphs (its transformation id is still taken).
from flowmagic.datastream.connectors.number_seq import NumberSequenceSource

env.set_parallelism(2)
cached = env.from_source(NumberSequenceSource(1, 6), WatermarkStrategy.no_watermarks(), "numbers").cache()
cached.print()
