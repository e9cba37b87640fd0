"""PyFlink's ``pyflink.datastream.connectors.file_system``: ``FileSink``.

PyFlink programs import FileSource and the FileSink's options on paths they may not take;
those import and fail, saying what to use, only when used.
"""

from flowmagic.api.pyflink import missing_names, unsupported_class
from flowmagic.api.sinks import FileSink

_MODULE = "flowmagic.datastream.connectors.file_system"
_SINK_OPTIONS = "FileSink names its part files as Flink's defaults and rolls once per subtask and run"

FileSource = unsupported_class(_MODULE, "FileSource", "flowmagic reads text files with env.read_text_file(path)")
StreamFormat = unsupported_class(_MODULE, "StreamFormat", "flowmagic reads text files with env.read_text_file(path)")
OutputFileConfig = unsupported_class(_MODULE, "OutputFileConfig", _SINK_OPTIONS)
RollingPolicy = unsupported_class(_MODULE, "RollingPolicy", _SINK_OPTIONS)

__all__ = ["FileSink", "FileSource", "OutputFileConfig", "RollingPolicy", "StreamFormat"]

__getattr__ = missing_names(_MODULE, {"BucketAssigner": _SINK_OPTIONS, "StreamingFileSink": "use FileSink"}, __all__)
