# env.configure(Configuration): parallelism, max parallelism, job name, chaining and the watermark interval from
# Flink's option keys; an unknown key is ignored, as Flink ignores it.
from flowmagic.common import Configuration
from flowmagic.datastream.connectors.number_seq import NumberSequenceSource

configuration = Configuration()
configuration.set_string("parallelism.default", "3")
configuration.set_string("pipeline.max-parallelism", "64")
configuration.set_string("pipeline.name", "configured job")
configuration.set_string("pipeline.operator-chaining.enabled", "false")
configuration.set_string("pipeline.auto-watermark-interval", "0 ms")
configuration.set_string("no.such.option", "whatever")
env.configure(configuration)
ds = env.from_source(NumberSequenceSource(1, 10), WatermarkStrategy.for_monotonous_timestamps(), "numbers")
ds.rebalance().print()
