"""Flink's unified sources for ``env.from_source``: ``FileSource`` and ``NumberSequenceSource``.

A source here is plain data: what ``from_source`` needs to add its SourceTransformation (the
runtime operator kind and its parameters, and whether it ends by itself). PyFlink's Java
``SourceFunction`` wrappers cannot run here: flowmagic runs no Java code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flowmagic.errors import InvalidArgumentError, InvalidTypeError, UnsupportedFeatureError
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.vocabulary.time import Duration, to_millis
from flowmagic.vocabulary.types import TypeInformation, Types

__all__ = [
    "FileSource",
    "FileSourceBuilder",
    "NumberSequenceSource",
    "Source",
    "SourceFunction",
    "StreamFormat",
    "java_source_unsupported",
]


class Source:
    """A unified source (Flink's ``Source``), the argument of ``env.from_source``."""

    def operator_spec(self) -> OperatorSpec:
        """The runtime operator that reads this source."""
        raise NotImplementedError

    def is_bounded(self) -> bool:
        """Whether the source ends by itself (Flink's ``Boundedness.BOUNDED``)."""
        raise NotImplementedError

    def produced_type(self) -> TypeInformation | None:
        """The type of its records when ``from_source`` declares none (Flink's
        ``ResultTypeQueryable``); None: undeclared."""
        return None


@dataclass(frozen=True)
class NumberSequenceSource(Source):
    """The numbers ``start`` to ``end`` (both included), split into one contiguous sub-sequence
    per parallel reader, as Flink's ``NumberSequenceSource``. Always bounded."""

    start: int
    end: int

    def __post_init__(self) -> None:
        for value in (self.start, self.end):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidTypeError(f"NumberSequenceSource expects ints, got {value!r}")
        if self.start > self.end:
            raise InvalidArgumentError("'from' must be <= 'to'")

    def operator_spec(self) -> OperatorSpec:
        return OperatorSpec(OperatorKind.SOURCE_SEQUENCE, {"start": self.start, "end": self.end})

    def is_bounded(self) -> bool:
        return True

    def produced_type(self) -> TypeInformation | None:
        return Types.LONG()


@dataclass(frozen=True)
class StreamFormat:
    """How a file's bytes become records; flowmagic has Flink's text line format."""

    charset_name: str = "UTF-8"

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> StreamFormat:
        """Each line of a file is a record (Flink's ``TextLineInputFormat``: lines end at
        ``\\n``, ``\\r`` or ``\\r\\n``, which are not part of the record)."""
        try:
            "".encode(charset_name)
        except LookupError:
            raise InvalidArgumentError(f"Unsupported charset: {charset_name}") from None
        return StreamFormat(charset_name)


@dataclass(frozen=True)
class FileSource(Source):
    """The lines of the files under ``paths`` (Flink's ``FileSource``): each file is one split,
    read whole by one reader; hidden files (``.`` or ``_`` first) are skipped, directories are
    read recursively.

    Built with ``FileSource.for_record_stream_format(StreamFormat.text_line_format(), path)``,
    then ``.build()``; ``.monitor_continuously(Duration)`` makes it unbounded: the paths are
    listed again at that interval and the files that appeared since are read (each once).
    """

    paths: tuple[str, ...]
    stream_format: StreamFormat
    discovery_interval_ms: int | None = None

    @staticmethod
    def for_record_stream_format(stream_format: StreamFormat, *paths: str) -> FileSourceBuilder:
        """A builder of a source reading ``paths`` (files or directories) with ``stream_format``."""
        if not isinstance(stream_format, StreamFormat):
            raise InvalidTypeError(
                f"FileSource needs a StreamFormat (StreamFormat.text_line_format()), got {stream_format!r}"
            )
        if not paths:
            raise InvalidArgumentError("FileSource needs at least one path")
        for path in paths:
            if not isinstance(path, str) or not path:
                raise InvalidArgumentError(f"FileSource paths are non-empty strings, got {path!r}")
        return FileSourceBuilder(tuple(paths), stream_format)

    @staticmethod
    def for_bulk_file_format(bulk_format: Any, *paths: str) -> FileSourceBuilder:
        raise UnsupportedFeatureError(
            "FileSource.for_bulk_file_format is not supported by flowmagic (no Parquet, ORC or Avro readers): "
            "read text with FileSource.for_record_stream_format(StreamFormat.text_line_format(), path)"
        )

    def operator_spec(self) -> OperatorSpec:
        return OperatorSpec(
            OperatorKind.SOURCE_FILE,
            {
                "paths": list(self.paths),
                "charset": self.stream_format.charset_name,
                "discovery_interval_ms": self.discovery_interval_ms,
            },
        )

    def is_bounded(self) -> bool:
        return self.discovery_interval_ms is None

    def produced_type(self) -> TypeInformation | None:
        return Types.STRING()


@dataclass(frozen=True)
class FileSourceBuilder:
    """PyFlink's ``FileSourceBuilder``: ``monitor_continuously``, ``process_static_file_set``, ``build``."""

    paths: tuple[str, ...]
    stream_format: StreamFormat
    discovery_interval_ms: int | None = None

    def monitor_continuously(self, discovery_interval: Duration) -> FileSourceBuilder:
        """Make the source unbounded: list the paths every ``discovery_interval`` and read the
        new files."""
        millis = to_millis(discovery_interval, "discovery_interval")
        if millis <= 0:
            raise InvalidArgumentError("discovery interval must be > 0")
        return FileSourceBuilder(self.paths, self.stream_format, millis)

    def process_static_file_set(self) -> FileSourceBuilder:
        """Read the files there are when the job starts, then end (the default)."""
        return FileSourceBuilder(self.paths, self.stream_format, None)

    def set_file_enumerator(self, file_enumerator: Any) -> FileSourceBuilder:
        raise UnsupportedFeatureError(
            "FileSourceBuilder.set_file_enumerator is not supported by flowmagic: files are enumerated "
            "recursively, hidden files skipped, one split per file"
        )

    def set_split_assigner(self, split_assigner: Any) -> FileSourceBuilder:
        raise UnsupportedFeatureError(
            "FileSourceBuilder.set_split_assigner is not supported by flowmagic: each reader takes every "
            "n-th file, in path order"
        )

    def build(self) -> FileSource:
        return FileSource(self.paths, self.stream_format, self.discovery_interval_ms)


def java_source_unsupported(source_func: Any) -> UnsupportedFeatureError:
    """The error for PyFlink's Java source functions (``SourceFunction``, ``add_source``)."""
    return UnsupportedFeatureError(
        f"SourceFunction({source_func!r}) wraps a Java source function, and flowmagic runs no Java code: "
        "use env.from_source(FileSource/NumberSequenceSource ...), from_collection, from_datagen, "
        "socket_text_stream or from_spark"
    )


class SourceFunction:
    """PyFlink's ``SourceFunction`` wraps a Java source function (a class name or a Java
    object); flowmagic runs no Java, so making one fails, saying what to use instead."""

    def __init__(self, source_func: Any):
        raise java_source_unsupported(source_func)
