"""PyFlink's ``pyflink.datastream.connectors``: the file source and sink, the number sequence."""

from flowmagic.api.pyflink import missing_names
from flowmagic.api.sources import FileSource, FileSourceBuilder, NumberSequenceSource, Source
from flowmagic.datastream.connectors.file_system import (
    BucketAssigner,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
)
from flowmagic.vocabulary.sinks import FileSink

__all__ = [
    "BucketAssigner",
    "FileSink",
    "FileSource",
    "FileSourceBuilder",
    "NumberSequenceSource",
    "OutputFileConfig",
    "RollingPolicy",
    "Source",
    "StreamFormat",
]

__getattr__ = missing_names(
    "flowmagic.datastream.connectors",
    {
        name: "flowmagic has no Kafka, JDBC or other external connectors: read a Spark streaming DataFrame "
        "with env.from_spark(spark.readStream...), write with add_sink(function) or FileSink"
        for name in ("Sink", "DeliveryGuarantee", "kafka", "jdbc", "pulsar", "kinesis", "elasticsearch")
    },
    __all__,
)
