"""PyFlink's module layout: what its names are in flowmagic, and clear errors for the others.

``flowmagic.datastream``, ``flowmagic.common`` and their submodules are named as PyFlink's
modules, so that a PyFlink program runs with ``pyflink`` replaced by ``flowmagic`` in its
imports. A name PyFlink has there and flowmagic does not raises
:class:`~flowmagic.errors.UnsupportedFeatureError` saying what to use instead, both when
imported and when read as an attribute of the module.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn

from flowmagic.errors import UnsupportedFeatureError

__all__ = ["ASYNC", "SCHEMAS", "missing_names", "unsupported_class"]

#: What to use instead of the PyFlink features several modules name.
ASYNC = "asynchronous I/O is not supported; call the service from a map() or process() function"
SCHEMAS = (
    "flowmagic has no connectors of bytes (Kafka, Pulsar) that take schemas: read them with Spark and "
    "env.from_spark(...); SimpleStringSchema and Encoder are what its sources and FileSink take"
)


def _raise(module: str, name: str, advice: str | None, available: list[str]) -> NoReturn:
    if advice is not None:
        raise UnsupportedFeatureError(f"{module}.{name} is not supported by flowmagic: {advice}")
    # flowmagic's own names (Java API classes PyFlink lacks, such as ProcessJoinFunction) are
    # all in the package itself, which is loaded whenever one of its modules is.
    if name in getattr(sys.modules.get("flowmagic"), "__all__", ()):
        raise UnsupportedFeatureError(
            f"{module} has no {name!r}: flowmagic has it as flowmagic.{name} (from flowmagic import {name})."
        )
    raise UnsupportedFeatureError(
        f"{module} has no {name!r}: flowmagic does not support it (or it is misspelt). "
        f"{module} has: {', '.join(sorted(available))}."
    )


def missing_names(module: str, advice: dict[str, str], available: list[str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module``: ``advice[name]`` says what to use instead of
    PyFlink's ``name``; other public names get the list of what the module has. Private and
    dunder names stay plain ``AttributeError`` (tools probe modules for them)."""

    def __getattr__(name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        _raise(module, name, advice.get(name), available)

    return __getattr__


class _Unsupported(type):
    """A class that fails when used (called, or a class attribute read), not when imported:
    PyFlink programs import names on paths they may never take."""

    _message: str

    def __call__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        raise UnsupportedFeatureError(cls._message)

    def __getattr__(cls, name: str) -> NoReturn:
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedFeatureError(cls._message)


def unsupported_class(module: str, name: str, advice: str) -> type:
    """PyFlink's ``module.name`` as a class that raises, with ``advice``, once used."""
    message = f"{module}.{name} is not supported by flowmagic: {advice}"
    return _Unsupported(name, (), {"_message": message, "__module__": module, "__doc__": message})
