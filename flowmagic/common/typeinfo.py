"""PyFlink's ``pyflink.common.typeinfo``."""

from flowmagic.api.pyflink import missing_names
from flowmagic.vocabulary.types import TypeInformation, Types

__all__ = ["TypeInformation", "Types"]

__getattr__ = missing_names(
    "flowmagic.common.typeinfo",
    {name: "declare types with Types.*()" for name in ("RowTypeInfo", "TupleTypeInfo", "BasicTypeInfo")},
    __all__,
)
