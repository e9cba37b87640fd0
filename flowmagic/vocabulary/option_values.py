"""Values of Flink configuration options as strings (``Configuration``, ``-D`` style), parsed
as Flink parses them and refused in Flink's words: ``Could not parse value '...' for key '...'``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from flowmagic.errors import InvalidArgumentError
from flowmagic.vocabulary.time import to_millis_text

__all__ = ["option_bool", "option_float", "option_int", "option_millis"]

_T = TypeVar("_T")


def _parsed(settings: Mapping[str, str], key: str, default: _T | None, parse: Callable[[str], _T]) -> _T:
    if default is not None and key not in settings:
        return default
    try:
        return parse(settings[key])
    except (ValueError, InvalidArgumentError):
        raise InvalidArgumentError(f"Could not parse value '{settings[key]}' for key '{key}'.") from None


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ValueError(text)
    return value == "true"


def option_int(settings: Mapping[str, str], key: str, default: int | None = None) -> int:
    """``settings[key]`` as an int (``default`` when the key is not set and one is given)."""
    return _parsed(settings, key, default, lambda text: int(text.strip()))


def option_float(settings: Mapping[str, str], key: str, default: float | None = None) -> float:
    """``settings[key]`` as a float (``default`` when the key is not set and one is given)."""
    return _parsed(settings, key, default, lambda text: float(text.strip()))


def option_millis(settings: Mapping[str, str], key: str, default: int | None = None) -> int:
    """``settings[key]``, a duration (``"10 s"``, ``"500"``), in ms (``default`` when unset and given)."""
    return _parsed(settings, key, default, lambda text: to_millis_text(text, key))


def option_bool(settings: Mapping[str, str], key: str) -> bool:
    """``settings[key]``, ``true`` or ``false`` (any case)."""
    return _parsed(settings, key, None, _bool)
