# from_source(FileSource): a parallel new-style source named "Source: <name>"; its watermark strategy adds no node.
from flowmagic.datastream.connectors.file_system import FileSource, StreamFormat

env.set_parallelism(2)
ds = env.from_source(
    FileSource.for_record_stream_format(StreamFormat.text_line_format(), "/tmp/in").build(),
    WatermarkStrategy.for_monotonous_timestamps(),
    "file_source",
)
ds.rebalance().print()
