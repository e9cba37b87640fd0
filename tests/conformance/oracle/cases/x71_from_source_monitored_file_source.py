# A FileSource monitoring its path is unbounded: AUTOMATIC runs STREAMING, source and print chain.
from flowmagic.datastream.connectors.file_system import FileSource, StreamFormat

env.set_parallelism(3)
env.set_runtime_mode(RuntimeExecutionMode.AUTOMATIC)
ds = env.from_source(
    FileSource.for_record_stream_format(StreamFormat.text_line_format(), "/tmp/in")
    .monitor_continuously(Duration.of_seconds(1))
    .build(),
    WatermarkStrategy.no_watermarks(),
    "monitored files",
)
ds.print()
