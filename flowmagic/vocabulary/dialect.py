"""The API dialect a program is written in: Java's DataStream API (flowmagic's own) or
PyFlink's. One object says what differs, and each difference is read where it matters: the
builder when it writes the program, the runtime when it runs it."""

from __future__ import annotations

from dataclasses import dataclass

from flowmagic.vocabulary.types import PICKLED, TypeInformation

__all__ = ["JAVA", "PYFLINK", "ApiDialect", "api_dialect"]

#: Java's Long.MIN_VALUE.
_LONG_MIN = -(1 << 63)


@dataclass(frozen=True)
class ApiDialect:
    """What a program's API does where PyFlink differs from Java's."""

    #: Its name, as a StreamGraph records it.
    name: str
    #: The record type of streams that declare none (``DataStream.get_type()``): None in
    #: Java's API (records printed as Java prints them), pickled Python objects in PyFlink's.
    undeclared_type: TypeInformation | None
    #: Whether ``key_by`` routes keys as PyFlink does, by the Java hash of a Row holding the
    #: key as its ``key_type`` (its pickled bytes when it declares none), instead of by the
    #: key's own Java ``hashCode``.
    pyflink_key_routing: bool
    #: ``ctx.timestamp()`` of a record without a timestamp: None in Java, Long.MIN_VALUE in PyFlink.
    missing_timestamp: int | None
    #: Whether windows work as PyFlink's Python window operator: its count window assigners
    #: (windows that fire once, of ``CountWindow`` objects), results stamped with the time of
    #: what fired them, ``window_all`` as a keyed window at the default parallelism, and time
    #: spans given as Time or Duration only.
    python_windows: bool

    def key_type(self, declared: TypeInformation | None) -> TypeInformation | None:
        """The type ``key_by`` routes a key as, for a ``key_type`` of ``declared`` (None:
        the key's own Java hash)."""
        if not self.pyflink_key_routing:
            return None
        return declared if declared is not None else PICKLED


JAVA = ApiDialect("java", undeclared_type=None, pyflink_key_routing=False, missing_timestamp=None, python_windows=False)
PYFLINK = ApiDialect(
    "pyflink", undeclared_type=PICKLED, pyflink_key_routing=True, missing_timestamp=_LONG_MIN, python_windows=True
)

_DIALECTS = {dialect.name: dialect for dialect in (JAVA, PYFLINK)}


def api_dialect(name: str) -> ApiDialect:
    """The dialect ``name`` (as a StreamGraph records it)."""
    return _DIALECTS[name]
