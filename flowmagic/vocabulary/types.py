"""Record types as PyFlink declares them (``Types.TUPLE([...])``) and PyFlink's ``Row``.

flowmagic keeps records as Python objects, so a type is a plain description: it changes
nothing in the graphs (Flink's ids do not depend on types) and only decides how the print
sink writes a record, as the Java type PyFlink converts the record to would print it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from flowmagic.errors import InvalidArgumentError, InvalidTypeError

__all__ = [
    "PICKLED",
    "Row",
    "RowKind",
    "TypeInformation",
    "Types",
    "as_declared",
    "as_row",
    "check_type_info",
    "is_tuple_type",
    "named_row",
]


@dataclass(frozen=True)
class TypeInformation:
    """A record type: ``name`` is how PyFlink shows it (``String``, ``TupleTypeInfo(...)``)."""

    name: str
    fields: tuple[TypeInformation, ...] = ()
    field_names: tuple[str, ...] | None = None

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


def _basic(name: str) -> TypeInformation:
    return TypeInformation(name)


#: PyFlink's default: records stay pickled Python objects and print as ``str(record)``.
PICKLED = TypeInformation("PickledByteArrayTypeInfo")


def _check_types(types: Any, what: str) -> tuple[TypeInformation, ...]:
    if isinstance(types, TypeInformation) or not isinstance(types, Sequence):
        raise InvalidTypeError(f"{what} expects a list of types such as [Types.STRING(), Types.INT()], got {types!r}")
    for type_info in types:
        check_type_info(type_info, what)
    return tuple(types)


def check_type_info(type_info: Any, what: str) -> TypeInformation | None:
    """``type_info`` if it is a type (or None); a clear error otherwise."""
    if type_info is not None and not isinstance(type_info, TypeInformation):
        raise InvalidTypeError(f"{what} expects a type such as Types.STRING(), got {type_info!r}")
    return type_info


class Types:
    """PyFlink's ``Types``: ``Types.STRING()``, ``Types.TUPLE([Types.STRING(), Types.INT()])`` ..."""

    @staticmethod
    def STRING() -> TypeInformation:
        return _basic("String")

    @staticmethod
    def BYTE() -> TypeInformation:
        return _basic("Byte")

    @staticmethod
    def BOOLEAN() -> TypeInformation:
        return _basic("Boolean")

    @staticmethod
    def SHORT() -> TypeInformation:
        return _basic("Short")

    @staticmethod
    def INT() -> TypeInformation:
        return _basic("Integer")

    @staticmethod
    def LONG() -> TypeInformation:
        return _basic("Long")

    @staticmethod
    def FLOAT() -> TypeInformation:
        return _basic("Float")

    @staticmethod
    def DOUBLE() -> TypeInformation:
        return _basic("Double")

    @staticmethod
    def CHAR() -> TypeInformation:
        return _basic("Character")

    @staticmethod
    def BIG_INT() -> TypeInformation:
        return _basic("BigInteger")

    @staticmethod
    def BIG_DEC() -> TypeInformation:
        return _basic("BigDecimal")

    @staticmethod
    def INSTANT() -> TypeInformation:
        return _basic("Instant")

    @staticmethod
    def SQL_DATE() -> TypeInformation:
        return _basic("Date")

    @staticmethod
    def SQL_TIME() -> TypeInformation:
        return _basic("Time")

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation:
        return _basic("Timestamp")

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation:
        return PICKLED

    @staticmethod
    def TUPLE(field_types: list[TypeInformation]) -> TypeInformation:
        fields = _check_types(field_types, "Types.TUPLE()")
        return TypeInformation(f"TupleTypeInfo({', '.join(map(str, fields))})", fields)

    @staticmethod
    def ROW(field_types: list[TypeInformation]) -> TypeInformation:
        fields = _check_types(field_types, "Types.ROW()")
        return Types.ROW_NAMED([f"f{i}" for i in range(len(fields))], list(fields))

    @staticmethod
    def ROW_NAMED(field_names: list[str], field_types: list[TypeInformation]) -> TypeInformation:
        fields = _check_types(field_types, "Types.ROW_NAMED()")
        names = tuple(field_names)
        if len(names) != len(fields) or not all(isinstance(name, str) for name in names):
            raise InvalidArgumentError("Types.ROW_NAMED() needs one str name per field type")
        shown = ", ".join(f"{name}: {type_info}" for name, type_info in zip(names, fields, strict=True))
        return TypeInformation(f"RowTypeInfo({shown})", fields, names)

    @staticmethod
    def LIST(element_type: TypeInformation) -> TypeInformation:
        check_type_info(element_type, "Types.LIST()")
        return TypeInformation(f"ListTypeInfo<{element_type}>", (element_type,))

    @staticmethod
    def MAP(key_type: TypeInformation, value_type: TypeInformation) -> TypeInformation:
        check_type_info(key_type, "Types.MAP()")
        check_type_info(value_type, "Types.MAP()")
        return TypeInformation(f"MapTypeInfo<{key_type}, {value_type}>", (key_type, value_type))

    @staticmethod
    def PRIMITIVE_ARRAY(element_type: TypeInformation) -> TypeInformation:
        check_type_info(element_type, "Types.PRIMITIVE_ARRAY()")
        return TypeInformation(f"PrimitiveArrayTypeInfo<{element_type}>", (element_type,))

    @staticmethod
    def BASIC_ARRAY(element_type: TypeInformation) -> TypeInformation:
        check_type_info(element_type, "Types.BASIC_ARRAY()")
        return TypeInformation(f"BasicArrayTypeInfo<{element_type}>", (element_type,))

    @staticmethod
    def OBJECT_ARRAY(element_type: TypeInformation) -> TypeInformation:
        check_type_info(element_type, "Types.OBJECT_ARRAY()")
        return TypeInformation(f"ObjectArrayTypeInfo<{element_type}>", (element_type,))


class RowKind(Enum):
    """The change a Row stands for; Flink prints its short string before the fields."""

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    @property
    def short_string(self) -> str:
        return ("+I", "-U", "+U", "-D")[self.value]

    def __str__(self) -> str:
        # PyFlink's RowKind prints as its short string.
        return self.short_string


class Row:
    """PyFlink's ``Row``: ``Row("a", 1)`` or ``Row(name="a", n=1)``; fields by index
    (``row[0]``), by name (``row.name``, ``row["name"]``); equal to a Row of equal fields.

    ``Row("name", "n")`` (names only) is a row class: calling it builds rows with those
    names, as in PyFlink.
    """

    __slots__ = ("_fields", "_row_kind", "_values")

    def __init__(self, *args: Any, **kwargs: Any):
        if args and kwargs:
            raise InvalidArgumentError("Row() takes either positional or keyword fields, not both")
        self._row_kind = RowKind.INSERT
        if kwargs:
            self._fields: list[str] | None = list(kwargs)
            self._values = list(kwargs.values())
        else:
            self._fields = None
            self._values = list(args)

    def __call__(self, *values: Any) -> Row:
        # A Row of field names used as a class, as PyFlink allows.
        if not all(isinstance(name, str) for name in self._values):
            raise InvalidTypeError("only a Row of field names can be called to build rows")
        if len(values) != len(self._values):
            raise InvalidArgumentError(f"this row class has {len(self._values)} fields, got {len(values)} values")
        return Row(**dict(zip(self._values, values, strict=True)))

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        """The fields by name (a Row built by position has none)."""
        if self._fields is None:
            raise InvalidTypeError("Cannot convert a Row without field names into a dict")
        values = [v.as_dict(True) if recursive and isinstance(v, Row) and v._fields else v for v in self._values]
        return dict(zip(self._fields, values, strict=True))

    def get_row_kind(self) -> RowKind:
        return self._row_kind

    def set_row_kind(self, row_kind: RowKind) -> None:
        self._row_kind = row_kind

    def set_field_names(self, field_names: list[str]) -> None:
        self._fields = list(field_names)

    def get_fields_by_names(self, names: list[str]) -> list[Any]:
        return [self[name] for name in names]

    def _index(self, name: str) -> int:
        if self._fields is None or name not in self._fields:
            raise KeyError(name)
        return self._fields.index(name)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, str):
            return self._values[self._index(item)]
        return self._values[item]

    def __setitem__(self, item: Any, value: Any) -> None:
        self._values[self._index(item) if isinstance(item, str) else item] = value

    def __getattr__(self, name: str) -> Any:
        # Unpickling looks up the slots before they are set: those are never fields.
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._values[self._index(name)]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        if name in Row.__slots__:
            object.__setattr__(self, name, value)
        else:
            raise AttributeError(f"Row fields are read-only as attributes; use row[{name!r}] = value")

    def __copy__(self) -> Row:
        copied = Row(*self._values)
        copied._fields = None if self._fields is None else list(self._fields)
        copied._row_kind = self._row_kind
        return copied

    def __getstate__(self) -> tuple[Any, ...]:
        return self._fields, self._values, self._row_kind

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self._fields, self._values, self._row_kind = state

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __contains__(self, item: Any) -> bool:
        return item in self._values if self._fields is None else item in self._fields

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Row):
            return NotImplemented
        return (self._fields, self._values, self._row_kind) == (other._fields, other._values, other._row_kind)

    def java_hash_code(self, hash_of: Callable[[Any], int]) -> int:
        """Java's ``Row.hashCode()`` of this row as a key, as measured on Flink 2.3's
        ``org.apache.flink.types.Row``: from 1, ``31 * r + 31 + h`` per field, plus 31 times
        the kind's byte value."""
        result = 1
        for value in self._values:
            result = (31 * result + 31 + (0 if value is None else hash_of(value))) & 0xFFFFFFFF
        return (31 * self._row_kind.value + result) & 0xFFFFFFFF

    def __hash__(self) -> int:
        return hash((tuple(self._fields or ()), tuple(self._values)))

    def __repr__(self) -> str:
        # PyFlink's own spellings: named rows like a call, positional ones in angle brackets.
        if self._fields is not None:
            return "Row(" + ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self._values, strict=True)) + ")"
        return "<Row(" + ", ".join(repr(v) for v in self._values) + ")>"


def as_row(record: Any, field_names: Sequence[str]) -> Any:
    """``record`` as a Row of ``field_names`` when it is a tuple or list of as many fields
    (what PyFlink makes of it for a Row type); anything else as it is."""
    if isinstance(record, (tuple, list)) and len(record) == len(field_names):
        return Row(**dict(zip(field_names, record, strict=True)))
    return record


def as_declared(record: Any, type_info: TypeInformation) -> Any:
    """``record`` as PyFlink hands a record of ``type_info`` on: through Java's types, so that
    a ``Types.FLOAT()`` is a 32-bit float (``110.1`` comes back as ``110.0999984741211``), and
    tuples declared as rows are Rows (see :func:`as_row`), field by field."""
    if type_info.name == "Float" and isinstance(record, (int, float)) and not isinstance(record, bool):
        return struct.unpack("f", struct.pack("f", record))[0]
    if type_info.name == "String" and type(record) is str:
        # Decoded as PyFlink decodes it: a string of its own, where the collection may hold
        # one string object in two fields (which pickles a key otherwise, with a back-reference).
        return record.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
    fields = type_info.fields
    if fields and isinstance(record, (tuple, list)) and len(record) == len(fields):
        if type_info.field_names is not None:
            declared = [as_declared(value, field) for value, field in zip(record, fields, strict=True)]
            return as_row(declared, type_info.field_names)
        if type_info.name.startswith("TupleTypeInfo"):
            return tuple(as_declared(value, field) for value, field in zip(record, fields, strict=True))
    return record


def named_row(row: Row, field_names: Sequence[str]) -> Row:
    """``row`` with the field names of its Row type, as PyFlink hands a typed Row on (its kind
    kept); ``row`` itself when it has them already."""
    names = list(field_names)
    if row._fields == names:
        return row
    named = Row(*row)
    named.set_field_names(names)
    named.set_row_kind(row.get_row_kind())
    return named


def is_tuple_type(type_info: TypeInformation) -> bool:
    """Whether ``type_info`` is a ``Types.TUPLE([...])``."""
    return type_info.field_names is None and type_info.name.startswith("TupleTypeInfo(")
