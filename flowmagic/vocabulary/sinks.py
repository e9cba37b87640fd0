"""Sink V2 descriptions for ``sink_to``: where records go and how they are encoded."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from flowmagic.errors import InvalidArgumentError, InvalidTypeError, UnsupportedFeatureError
from flowmagic.vocabulary.bucket_assigner import BucketAssigner
from flowmagic.vocabulary.output_file_config import OutputFileConfig
from flowmagic.vocabulary.rolling_policy import DefaultRollingPolicy, RollingPolicy

__all__ = ["Encoder", "FileSink", "SimpleStringSchema"]


@dataclass(frozen=True)
class Encoder:
    """How a row-format :class:`FileSink` writes a record: Flink's ``SimpleStringEncoder``,
    one line per record, the record's Java ``toString()`` in ``charset``."""

    charset: str = "UTF-8"

    @classmethod
    def simple_string_encoder(cls, charset_name: str = "UTF-8") -> Encoder:
        """Each record's ``toString()`` and a newline: as PyFlink writes the Java value a
        record of the stream's declared type becomes (``(a,1)`` for a tuple, ``+I[a, 1]``
        for a Row, ``1.0E20`` for a double)."""
        try:
            "".encode(charset_name)
        except LookupError as error:
            raise InvalidArgumentError(f"Unsupported charset: {charset_name}") from error
        return cls(charset_name)


@dataclass(frozen=True)
class SimpleStringSchema:
    """Strings as bytes in ``charset``, as Flink's ``SimpleStringSchema`` (for connectors)."""

    charset: str = "UTF-8"

    def serialize(self, value: str) -> bytes:
        return value.encode(self.charset)

    def deserialize(self, message: bytes) -> str:
        return message.decode(self.charset)


#: Flink's ``FileSink`` default: how often (ms of processing time) writers ask their
#: rolling policy whether the open part file is due to roll.
DEFAULT_BUCKET_CHECK_INTERVAL = 60 * 1000
_DEFAULT_ROLLING_POLICY = DefaultRollingPolicy()
_DEFAULT_BUCKET_ASSIGNER = BucketAssigner()
_DEFAULT_OUTPUT_FILE_CONFIG = OutputFileConfig()


@dataclass(frozen=True)
class FileSink:
    """Row-format files under ``base_path``, committed when the checkpoint after them
    completes, and at the end of a bounded job.

    Like Flink's ``FileSink`` it has a writer (per subtask, an open part file per bucket,
    rolled by its rolling policy) and a committer (which publishes the rolled files), so
    ``sink_to`` adds both operators. Buckets are directories under ``base_path`` (by default
    the processing hour, ``yyyy-MM-dd--HH``), part files are named by ``output_file_config``.
    """

    base_path: str
    encoder: Encoder
    rolling_policy: RollingPolicy = _DEFAULT_ROLLING_POLICY
    bucket_check_interval: int = DEFAULT_BUCKET_CHECK_INTERVAL
    bucket_assigner: BucketAssigner = _DEFAULT_BUCKET_ASSIGNER
    output_file_config: OutputFileConfig = _DEFAULT_OUTPUT_FILE_CONFIG
    has_committer: bool = True

    @classmethod
    def for_row_format(cls, base_path: str, encoder: Encoder) -> _FileSinkBuilder:
        """A builder of a sink writing each record as ``encoder`` says, one per line."""
        if not isinstance(base_path, str) or not base_path:
            raise InvalidArgumentError("FileSink base path must be a non-empty string")
        if not isinstance(encoder, Encoder):
            raise InvalidTypeError(f"FileSink needs an Encoder, got {encoder!r}")
        return _FileSinkBuilder(base_path, encoder)

    @classmethod
    def for_bulk_format(cls, base_path: str, writer_factory: Any) -> _FileSinkBuilder:
        raise UnsupportedFeatureError(
            "FileSink.for_bulk_format is not supported by flowmagic: write rows, "
            "FileSink.for_row_format(path, Encoder.simple_string_encoder())"
        )


@dataclass(frozen=True)
class _FileSinkBuilder:
    base_path: str
    encoder: Encoder
    rolling_policy: RollingPolicy = _DEFAULT_ROLLING_POLICY
    bucket_check_interval: int = DEFAULT_BUCKET_CHECK_INTERVAL
    bucket_assigner: BucketAssigner = _DEFAULT_BUCKET_ASSIGNER
    output_file_config: OutputFileConfig = _DEFAULT_OUTPUT_FILE_CONFIG

    def with_rolling_policy(self, rolling_policy: RollingPolicy) -> _FileSinkBuilder:
        """When part files roll (``RollingPolicy.default_rolling_policy(...)`` by default)."""
        if not isinstance(rolling_policy, RollingPolicy):
            raise InvalidTypeError(f"FileSink needs a RollingPolicy, got {rolling_policy!r}")
        return replace(self, rolling_policy=rolling_policy)

    def with_bucket_check_interval(self, interval: int) -> _FileSinkBuilder:
        """How often (ms) the rolling policy is asked whether a part file is due by time."""
        if isinstance(interval, bool) or not isinstance(interval, int) or interval <= 0:
            raise InvalidArgumentError(f"FileSink bucket check interval must be a positive int (ms), got {interval!r}")
        return replace(self, bucket_check_interval=interval)

    def with_bucket_assigner(self, bucket_assigner: BucketAssigner) -> _FileSinkBuilder:
        """Which directory a record's part file lies in (the processing hour by default)."""
        if not isinstance(bucket_assigner, BucketAssigner):
            raise InvalidTypeError(f"FileSink needs a BucketAssigner, got {bucket_assigner!r}")
        return replace(self, bucket_assigner=bucket_assigner)

    def with_output_file_config(self, output_file_config: OutputFileConfig) -> _FileSinkBuilder:
        """The part files' prefix and suffix."""
        if not isinstance(output_file_config, OutputFileConfig):
            raise InvalidTypeError(f"FileSink needs an OutputFileConfig, got {output_file_config!r}")
        return replace(self, output_file_config=output_file_config)

    def disable_compact(self) -> _FileSinkBuilder:
        """Compaction is off (flowmagic does not compact)."""
        return self

    def enable_compact(self, strategy: Any, compactor: Any) -> _FileSinkBuilder:
        raise UnsupportedFeatureError(
            "FileSink compaction is not supported by flowmagic: roll larger part files instead, "
            "RollingPolicy.default_rolling_policy(part_size=...)"
        )

    def build(self) -> FileSink:
        return FileSink(
            self.base_path,
            self.encoder,
            self.rolling_policy,
            self.bucket_check_interval,
            self.bucket_assigner,
            self.output_file_config,
        )
