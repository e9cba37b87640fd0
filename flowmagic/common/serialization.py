"""PyFlink's ``pyflink.common.serialization``."""

from flowmagic.api.pyflink import SCHEMAS, missing_names
from flowmagic.vocabulary.sinks import Encoder, SimpleStringSchema

__all__ = ["Encoder", "SimpleStringSchema"]

__getattr__ = missing_names(
    "flowmagic.common.serialization",
    {
        "BulkWriterFactory": "FileSink writes row formats only: FileSink.for_row_format(path, Encoder...)",
        "SerializationSchema": SCHEMAS,
        "DeserializationSchema": SCHEMAS,
        "ByteArraySchema": SCHEMAS,
        "RowFieldExtractorSchema": SCHEMAS,
    },
    __all__,
)
