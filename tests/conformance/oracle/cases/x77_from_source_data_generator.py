# Flink's DataGeneratorSource (records of an index, rate-limited) under its own name.
from flowmagic.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy

env.set_parallelism(2)
ds = env.from_source(
    DataGeneratorSource(lambda i: f"record-{i}", 100, RateLimiterStrategy.per_second(50), Types.STRING()),
    WatermarkStrategy.no_watermarks(),
    "generator",
)
ds.map(lambda s: len(s)).print()
