# A FileSource of a static file set is bounded: AUTOMATIC runs BATCH (blocking exchanges).
from flowmagic.datastream.connectors.file_system import FileSource, StreamFormat

env.set_runtime_mode(RuntimeExecutionMode.AUTOMATIC)
env.set_parallelism(2)
ds = env.from_source(
    FileSource.for_record_stream_format(StreamFormat.text_line_format(), "/tmp/a", "/tmp/b").build(),
    WatermarkStrategy.no_watermarks(),
    "two paths",
)
ds.print()
ds.rebalance().print()
