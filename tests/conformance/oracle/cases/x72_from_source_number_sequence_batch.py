# NumberSequenceSource under its own name, shuffled into a FileSink in BATCH mode.
from flowmagic.datastream.connectors.number_seq import NumberSequenceSource

env.set_runtime_mode(RuntimeExecutionMode.BATCH)
env.set_parallelism(1)
ds = env.from_source(NumberSequenceSource(1, 100), WatermarkStrategy.no_watermarks(), "numbers")
ds.shuffle().sink_to(FileSink.for_row_format("/tmp/out", Encoder.simple_string_encoder()).build())
