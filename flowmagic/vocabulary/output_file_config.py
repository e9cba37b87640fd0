"""How a FileSink names its part files: ``<prefix>-<unique id>-<counter><suffix>``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from flowmagic.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["OutputFileConfig", "OutputFileConfigBuilder"]


@dataclass(frozen=True)
class OutputFileConfig:
    """The part files' names: ``<prefix>-<unique id>-<counter><suffix>``."""

    part_prefix: str = "part"
    part_suffix: str = ""

    @staticmethod
    def builder() -> OutputFileConfigBuilder:
        return OutputFileConfigBuilder()

    def get_part_prefix(self) -> str:
        return self.part_prefix

    def get_part_suffix(self) -> str:
        return self.part_suffix


class OutputFileConfigBuilder:
    """Builds an :class:`OutputFileConfig` (``OutputFileConfig.builder()``)."""

    def __init__(self) -> None:
        self._config = OutputFileConfig()

    def with_part_prefix(self, prefix: str) -> OutputFileConfigBuilder:
        self._config = replace(self._config, part_prefix=_checked_name_part(prefix, "prefix"))
        return self

    def with_part_suffix(self, suffix: str) -> OutputFileConfigBuilder:
        self._config = replace(self._config, part_suffix=_checked_name_part(suffix, "suffix"))
        return self

    def build(self) -> OutputFileConfig:
        return self._config


def _checked_name_part(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidTypeError(f"The part {what} must be a string, got {value!r}")
    if "/" in value:
        raise InvalidArgumentError(f"The part {what} must not contain '/': {value!r}")
    return value
