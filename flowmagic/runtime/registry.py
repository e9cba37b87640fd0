"""The runtime implementation of each operator kind: one registration mechanism for all.

An operator or source class registers the kinds it implements with ``@register(kind, ...)``;
the driver and the tasks look them up with :func:`implementation`, and read what a kind can
do from its class (``emits_results``, ``combinable``, ...), never from lists of kind names.
:mod:`flowmagic.runtime.catalog` imports every implementing module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flowmagic.errors import JobError
from flowmagic.graph.operators import OperatorKind

__all__ = ["implementation", "register", "registered_kinds"]

_IMPLEMENTATIONS: dict[OperatorKind, type[Any]] = {}

Implementation = TypeVar("Implementation", bound=type[Any])


def register(*kinds: OperatorKind) -> Callable[[Implementation], Implementation]:
    """Class decorator: the runtime implementation of these operator kinds."""

    def decorate(cls: Implementation) -> Implementation:
        for kind in kinds:
            if kind in _IMPLEMENTATIONS:
                raise RuntimeError(f"operator kind {kind} is implemented twice: {_IMPLEMENTATIONS[kind]} and {cls}")
            _IMPLEMENTATIONS[kind] = cls
        return cls

    return decorate


def implementation(kind: OperatorKind) -> type[Any]:
    """The class that runs operators of ``kind``."""
    from flowmagic.runtime import catalog  # noqa: F401 - registers every kind on first use

    try:
        return _IMPLEMENTATIONS[kind]
    except KeyError:
        raise JobError(f"flowmagic's runtime cannot run operators of kind {kind!r} (yet)") from None


def registered_kinds() -> frozenset[OperatorKind]:
    """Every kind the runtime can run."""
    from flowmagic.runtime import catalog  # noqa: F401 - registers every kind on first use

    return frozenset(_IMPLEMENTATIONS)
