"""PyFlink's ``pyflink.datastream.connectors.file_system``: ``FileSource`` and ``FileSink``.

PyFlink programs import the FileSink's options on paths they may not take; those import and
fail, saying what to use, only when used.
"""

from flowmagic.api.pyflink import missing_names, unsupported_class
from flowmagic.api.rolling_policy import DefaultRollingPolicy, OnCheckpointRollingPolicy, RollingPolicy
from flowmagic.api.sinks import FileSink
from flowmagic.api.sources import FileSource, FileSourceBuilder, StreamFormat

_MODULE = "flowmagic.datastream.connectors.file_system"
_SINK_OPTIONS = "FileSink names its part files as Flink's defaults, in one bucket (its base path)"

OutputFileConfig = unsupported_class(_MODULE, "OutputFileConfig", _SINK_OPTIONS)

__all__ = [
    "DefaultRollingPolicy",
    "FileSink",
    "FileSource",
    "FileSourceBuilder",
    "OnCheckpointRollingPolicy",
    "OutputFileConfig",
    "RollingPolicy",
    "StreamFormat",
]

__getattr__ = missing_names(
    _MODULE,
    {
        "BucketAssigner": _SINK_OPTIONS,
        "StreamingFileSink": "use FileSink",
        "BulkFormat": "FileSource reads text lines: StreamFormat.text_line_format()",
        "FileEnumeratorProvider": "FileSource lists files recursively, skipping hidden ones, one split per file",
        "FileSplitAssignerProvider": "each FileSource reader takes every n-th file, in path order",
    },
    __all__,
)
