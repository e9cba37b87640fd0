"""PyFlink's ``pyflink.common.types``: ``Row`` and ``RowKind``."""

from flowmagic.api.pyflink import missing_names
from flowmagic.vocabulary.types import Row, RowKind

__all__ = ["Row", "RowKind"]

__getattr__ = missing_names("flowmagic.common.types", {}, __all__)
