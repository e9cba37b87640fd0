"""Sink V2 descriptions for ``sink_to``: where records go and how they are encoded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True)
class FileSink:
    """Row-format files under ``base_path``, committed only when the job succeeds.

    Like Flink's ``FileSink`` it has a writer (one in-progress file per subtask) and a
    committer (which publishes the files), so ``sink_to`` adds both operators.
    """

    base_path: str
    encoder: Encoder
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

    def build(self) -> FileSink:
        return FileSink(self.base_path, self.encoder)
