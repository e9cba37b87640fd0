"""PyFlink's ``pyflink.datastream.connectors``: flowmagic's one connector is the FileSink."""

from flowmagic.api.pyflink import missing_names
from flowmagic.api.sinks import FileSink
from flowmagic.datastream.connectors.file_system import FileSource, OutputFileConfig, RollingPolicy, StreamFormat

__all__ = ["FileSink", "FileSource", "OutputFileConfig", "RollingPolicy", "StreamFormat"]

__getattr__ = missing_names(
    "flowmagic.datastream.connectors",
    {
        name: "flowmagic has no Kafka, JDBC or other external connectors: read a Spark streaming DataFrame "
        "with env.from_spark(spark.readStream...), write with add_sink(function) or FileSink"
        for name in ("Sink", "Source", "DeliveryGuarantee", "kafka", "jdbc", "pulsar", "kinesis", "elasticsearch")
    },
    __all__,
)
