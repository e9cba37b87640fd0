"""Sink V2 descriptions for ``sink_to``: where records go and how they are encoded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from flowmagic.api.rolling_policy import DefaultRollingPolicy, RollingPolicy
from flowmagic.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["Encoder", "FileSink", "SimpleStringSchema"]


@dataclass(frozen=True)
class Encoder:
    """Turns a record into the bytes of one output line."""

    encode: Callable[[Any], str]

    @classmethod
    def simple_string_encoder(cls) -> Encoder:
        """``str(record)`` per line, as Flink's ``SimpleStringEncoder``."""
        return cls(str)


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


@dataclass(frozen=True)
class FileSink:
    """Row-format files under ``base_path``, committed when the checkpoint after them
    completes, and at the end of a bounded job.

    Like Flink's ``FileSink`` it has a writer (an open part file per subtask, rolled by its
    rolling policy) and a committer (which publishes the rolled files), so ``sink_to`` adds
    both operators.
    """

    base_path: str
    encoder: Encoder
    rolling_policy: RollingPolicy = _DEFAULT_ROLLING_POLICY
    bucket_check_interval: int = DEFAULT_BUCKET_CHECK_INTERVAL
    has_committer: bool = True

    @classmethod
    def for_row_format(cls, base_path: str, encoder: Encoder) -> _FileSinkBuilder:
        if not isinstance(base_path, str) or not base_path:
            raise InvalidArgumentError("FileSink base path must be a non-empty string")
        if not isinstance(encoder, Encoder):
            raise InvalidTypeError(f"FileSink needs an Encoder, got {encoder!r}")
        return _FileSinkBuilder(base_path, encoder)


@dataclass(frozen=True)
class _FileSinkBuilder:
    base_path: str
    encoder: Encoder
    rolling_policy: RollingPolicy = _DEFAULT_ROLLING_POLICY
    bucket_check_interval: int = DEFAULT_BUCKET_CHECK_INTERVAL

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

    def build(self) -> FileSink:
        return FileSink(self.base_path, self.encoder, self.rolling_policy, self.bucket_check_interval)
