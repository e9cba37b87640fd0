"""PyFlink's ``pyflink.datastream.connectors.file_system``: ``FileSource`` and ``FileSink``.

PyFlink programs import names on paths they may not take; those flowmagic does not support
import and fail, saying what to use, only when used.
"""

from flowmagic.api.pyflink import missing_names, unsupported_class
from flowmagic.api.sources import FileSource, FileSourceBuilder, StreamFormat
from flowmagic.vocabulary.bucket_assigner import BucketAssigner
from flowmagic.vocabulary.output_file_config import OutputFileConfig
from flowmagic.vocabulary.rolling_policy import DefaultRollingPolicy, OnCheckpointRollingPolicy, RollingPolicy
from flowmagic.vocabulary.sinks import FileSink

_MODULE = "flowmagic.datastream.connectors.file_system"
_NO_COMPACTION = (
    "FileSink does not compact: roll larger part files, RollingPolicy.default_rolling_policy(part_size=...)"
)

FileCompactStrategy = unsupported_class(_MODULE, "FileCompactStrategy", _NO_COMPACTION)
FileCompactor = unsupported_class(_MODULE, "FileCompactor", _NO_COMPACTION)

__all__ = [
    "BucketAssigner",
    "DefaultRollingPolicy",
    "FileCompactStrategy",
    "FileCompactor",
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
        "StreamingFileSink": "use FileSink",
        "BulkFormat": "FileSource reads text lines: StreamFormat.text_line_format()",
        "FileEnumeratorProvider": "FileSource lists files recursively, skipping hidden ones, one split per file",
        "FileSplitAssignerProvider": "each FileSource reader takes every n-th file, in path order",
    },
    __all__,
)
