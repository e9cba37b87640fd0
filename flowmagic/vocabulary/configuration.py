"""Flink's ``Configuration``: string keys, typed values."""

from __future__ import annotations

from typing import Any

from flowmagic.errors import InvalidTypeError

__all__ = ["Configuration"]


class Configuration:
    """Key/value settings, as PyFlink's ``Configuration`` (``set_string``, ``get_integer``...).

    ``StreamExecutionEnvironment.get_execution_environment(configuration)`` and
    ``env.configure(configuration)`` read the options listed in
    :meth:`~flowmagic.api.environment.StreamExecutionEnvironment.configure`; as in Flink,
    other keys are ignored.
    """

    def __init__(self, other: Configuration | None = None):
        self._values: dict[str, str] = dict(other._values) if other is not None else {}

    def set_string(self, key: str, value: str) -> Configuration:
        if not isinstance(key, str):
            raise InvalidTypeError(f"configuration keys are strings, got {key!r}")
        self._values[key] = str(value)
        return self

    def get_string(self, key: str, default_value: str | None = None) -> str | None:
        return self._values.get(key, default_value)

    def set_integer(self, key: str, value: int) -> Configuration:
        return self.set_string(key, str(int(value)))

    def get_integer(self, key: str, default_value: int = 0) -> int:
        value = self._values.get(key)
        return default_value if value is None else int(value)

    def set_boolean(self, key: str, value: bool) -> Configuration:
        return self.set_string(key, "true" if value else "false")

    def get_boolean(self, key: str, default_value: bool = False) -> bool:
        value = self._values.get(key)
        return default_value if value is None else value.strip().lower() == "true"

    def contains_key(self, key: str) -> bool:
        return key in self._values

    def key_set(self) -> set[str]:
        return set(self._values)

    def to_dict(self) -> dict[str, str]:
        return dict(self._values)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Configuration) and other._values == self._values

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items())))

    def __repr__(self) -> str:
        return f"Configuration({self._values!r})"
