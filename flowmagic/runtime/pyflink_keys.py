"""Where PyFlink sends a ``key_by`` key: by the Java hash of ``Row.of(key)``.

PyFlink's ``key_by(selector, key_type)`` computes the key in Python and keys the Java stream
by a one-field Row holding it, converted to ``key_type`` (when no type is declared, the key's
pickled bytes, as cloudpickle writes them: ``Types.PICKLED_BYTE_ARRAY()``). The subtask of a
key follows from that Row's ``hashCode()``, which :func:`pyflink_key_hash` computes.

A key holding flowmagic's stand-ins for PyFlink's classes (``Row``, ``RowKind``, the windows)
is pickled as PyFlink pickles its own: the classes named by PyFlink's modules, a ``Row`` by
PyFlink's ``_create_row(fields, values, row_kind)``. ``cloudpickle.dumps`` is ``pickle``'s C
pickler (protocol 5, framed) with reducers of its own only for what it cannot name (classes
and functions of ``__main__``, written by value) and a few built-in types (code, cells, dict
views, loggers): for other keys its bytes are ``pickle.dumps``'s.
"""

from __future__ import annotations

import io
import pickle
import types
from typing import Any

from flowmagic.errors import KeyRoutingError
from flowmagic.key_groups import java_boxed_hash_code, java_byte_array_hash
from flowmagic.vocabulary.types import PICKLED, Row, RowKind, TypeInformation
from flowmagic.vocabulary.windows import CountWindow, GlobalWindow, TimeWindow

__all__ = ["pyflink_key_hash", "pyflink_pickle"]

_MASK = 0xFFFFFFFF


def _int32(value: int) -> int:
    value &= _MASK
    return value - (1 << 32) if value >= 1 << 31 else value


def _row_hash(values: list[int], kind: int) -> int:
    # org.apache.flink.types.Row.hashCode() of fields hashing to ``values`` (measured on
    # Flink 2.3: 62 + h for one field of an INSERT row).
    result = 1
    for value in values:
        result = (31 * result + 31 + value) & _MASK
    return _int32(31 * kind + result)


def _create_row(fields: list[str] | None, values: tuple[Any, ...], row_kind: RowKind) -> Row:
    """PyFlink's ``pyflink.common.types._create_row``, which PyFlink's pickles of Rows call:
    the Row they stand for."""
    row = Row(*values)
    if fields is not None:
        row.set_field_names(fields)
    row.set_row_kind(row_kind)
    return row


# One string object per module: the pickler memoizes strings by identity, and PyFlink's
# classes and functions of one module share their module's ``__name__`` (a second global of
# the module refers to the first one's string).
_TYPES = "pyflink.common.types"
_WINDOW = "pyflink.datastream.window"
# flowmagic's stand-ins for PyFlink's globals (by identity), as PyFlink's module and name.
_PYFLINK_NAMES: dict[int, tuple[str, str]] = {
    id(_create_row): (_TYPES, "_create_row"),
    id(RowKind): (_TYPES, "RowKind"),
    # Instances of these (frozen dataclasses here, plain classes in PyFlink) pickle alike: the
    # class and the instance's __dict__ of the same fields in the same order.
    id(TimeWindow): (_WINDOW, "TimeWindow"),
    id(CountWindow): (_WINDOW, "CountWindow"),
    id(GlobalWindow): (_WINDOW, "GlobalWindow"),
}
# Every stand-in is defined in one of flowmagic's modules, so a pickle naming none of them
# holds none of them; one of these types cannot hold any, and its bytes are not searched.
_OWN_MODULES = b"flowmagic."
_SCALARS = frozenset({str, int, float, bool, bytes, type(None)})
_PROTOCOL = pickle.HIGHEST_PROTOCOL


class _PyFlinkPickler(pickle._Pickler):
    """``pickle``'s pure-Python pickler (it writes the same bytes as the C one cloudpickle
    uses), naming flowmagic's stand-ins by PyFlink's modules: the C pickler imports a global's
    module to check it, and this process has no ``pyflink`` to import."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Row):
            fields, values, kind = obj.__getstate__()
            return _create_row, (fields, tuple(values), kind)
        return NotImplemented

    def save_global(self, obj: Any, name: str | None = None) -> None:
        # (typeshed leaves the pure-Python pickler's methods out.)
        pyflink = _PYFLINK_NAMES.get(id(obj))
        if pyflink is None:
            super().save_global(obj, name)  # type: ignore[misc]
            return
        # What pickle writes for a global at protocol 4 and later.
        module, qualified_name = pyflink
        self.save(module)  # type: ignore[attr-defined]
        self.save(qualified_name)  # type: ignore[attr-defined]
        self.write(pickle.STACK_GLOBAL)  # type: ignore[attr-defined]
        self.memoize(obj)  # type: ignore[attr-defined]

    # The base class's table saves functions by its own save_global.
    dispatch = {**pickle._Pickler.dispatch, types.FunctionType: save_global}  # type: ignore[dict-item]


def pyflink_pickle(value: Any) -> bytes:
    """The bytes PyFlink pickles ``value`` to as a key without ``key_type``
    (``cloudpickle.dumps``: protocol 5, framed), flowmagic's stand-ins named as PyFlink's."""
    out = io.BytesIO()
    _PyFlinkPickler(out, _PROTOCOL).dump(value)
    return out.getvalue()


# Java hashes of keys holding stand-ins, by flowmagic's own pickle of the key: equal pickles
# are equal object graphs, which PyFlink's pickler writes alike. A stream's keys recur, and
# the pure-Python pickler is several times slower than the C one.
_RENAMED_HASHES: dict[bytes, int] = {}
_RENAMED_HASHES_LIMIT = 4096


def _pickled_hash(value: Any) -> int:
    try:
        data = pickle.dumps(value, _PROTOCOL)
        # bytes.find: ``in`` first tries its operand as an int, which costs more than the search.
        if type(value) in _SCALARS or data.find(_OWN_MODULES) < 0:
            return java_byte_array_hash(data)
        known = _RENAMED_HASHES.get(data)
        if known is not None:
            return known
        renamed = pyflink_pickle(value)
    except Exception as error:
        raise KeyRoutingError(
            f"This key ({type(value).__name__}) cannot be pickled, as PyFlink pickles a key_by key declared "
            f"without key_type: {error}"
        ) from error
    if len(_RENAMED_HASHES) >= _RENAMED_HASHES_LIMIT:
        _RENAMED_HASHES.clear()
    known = _RENAMED_HASHES[data] = java_byte_array_hash(renamed)
    return known


def _typed_hash(value: Any, type_info: TypeInformation) -> int:
    if value is None:
        return 0
    if type_info == PICKLED:
        return _pickled_hash(value)
    name, fields = type_info.name, type_info.fields
    if name.startswith("RowTypeInfo"):
        kind = value.get_row_kind().value if isinstance(value, Row) else 0
        return _row_hash([_typed_hash(v, t) for v, t in zip(value, fields, strict=True)], kind)
    if name.startswith("TupleTypeInfo"):
        result = 0
        for index, (field, field_type) in enumerate(zip(value, fields, strict=True)):
            field_hash = _typed_hash(field, field_type)
            result = field_hash if index == 0 else _int32(31 * result + field_hash)
        return result
    return java_boxed_hash_code(value, name)


def pyflink_key_hash(key: Any, key_type: TypeInformation) -> int:
    """The Java hash PyFlink routes ``key`` by when ``key_by`` declared ``key_type``
    (:data:`~flowmagic.vocabulary.types.PICKLED` when it declared none).

    Keys of built-in types (numbers, strings, bytes, None, tuples of them) pickle to the
    same bytes under ``pickle`` as under cloudpickle, and so do flowmagic's ``Row``,
    ``RowKind`` and windows, named as PyFlink's; an object of a class of the program's
    ``__main__`` does not (PyFlink's cloudpickle writes the class by value).
    """
    if key is not None and (key_type is PICKLED or key_type == PICKLED):
        # The general path's Row.of(bytes).hashCode() in one step (the most common key_by;
        # on Spark's workers the type is an unpickled copy).
        return _int32(62 + _pickled_hash(key))
    return _row_hash([_typed_hash(key, key_type)], 0)
