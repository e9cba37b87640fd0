"""The runtime implementation of each operator kind: one registration mechanism for all.

An operator or source class registers the kinds it implements with ``@register(kind, ...)``;
the driver and the tasks look them up with :func:`implementation`, and read what a kind can
do from its class (``emits_results``, ``combinable``, ...), never from lists of kind names.
A class that names an ``identifier`` is also a connector (:mod:`flowmagic.runtime.connectors.factories`),
found by it with :func:`connectors`. :mod:`flowmagic.runtime.catalog` imports every
implementing module; a connector defined elsewhere registers a kind of its own (a string,
see :class:`~flowmagic.graph.operators.OperatorSpec`) when its module is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flowmagic.errors import JobError
from flowmagic.graph.operators import OperatorKind

__all__ = ["connector_identifiers", "connectors", "implementation", "implemented", "register", "registered_kinds"]

_IMPLEMENTATIONS: dict[OperatorKind | str, type[Any]] = {}
_CONNECTORS: dict[str, list[type[Any]]] = {}

Implementation = TypeVar("Implementation", bound=type[Any])


def register(*kinds: OperatorKind | str) -> Callable[[Implementation], Implementation]:
    """Class decorator: the runtime implementation of these operator kinds (and the connector
    its ``identifier`` names, if it names one)."""

    def decorate(cls: Implementation) -> Implementation:
        for kind in kinds:
            if kind in _IMPLEMENTATIONS:
                raise RuntimeError(f"operator kind {kind} is implemented twice: {_IMPLEMENTATIONS[kind]} and {cls}")
            _IMPLEMENTATIONS[kind] = cls
        identifier = cls.__dict__.get("identifier")
        if identifier is not None:
            _CONNECTORS.setdefault(identifier, []).append(cls)
        return cls

    return decorate


def implementation(kind: OperatorKind | str) -> type[Any]:
    """The class that runs operators of ``kind``."""
    from flowmagic.runtime import catalog  # noqa: F401 - registers every kind on first use

    try:
        return _IMPLEMENTATIONS[kind]
    except KeyError:
        raise JobError(f"flowmagic's runtime cannot run operators of kind {kind!r} (yet)") from None


def implemented(kind: OperatorKind | str) -> bool:
    """Whether a class registered so far implements ``kind`` (for a fallback registered last)."""
    return kind in _IMPLEMENTATIONS


def registered_kinds() -> frozenset[OperatorKind]:
    """Every kind of flowmagic's own that the runtime can run (connectors defined elsewhere
    are listed by :func:`connectors`)."""
    from flowmagic.runtime import catalog  # noqa: F401 - registers every kind on first use

    return frozenset(kind for kind in _IMPLEMENTATIONS if isinstance(kind, OperatorKind))


def connectors(identifier: str) -> list[type[Any]]:
    """The classes of connector ``identifier``: a source's, a sink's, or both."""
    from flowmagic.runtime import catalog  # noqa: F401 - registers every connector on first use

    return list(_CONNECTORS.get(identifier, ()))


def connector_identifiers() -> list[str]:
    """The identifier of every connector, sorted."""
    from flowmagic.runtime import catalog  # noqa: F401 - registers every connector on first use

    return sorted(_CONNECTORS)
