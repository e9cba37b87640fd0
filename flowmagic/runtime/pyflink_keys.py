"""Where PyFlink sends a ``key_by`` key: by the Java hash of ``Row.of(key)``.

PyFlink's ``key_by(selector, key_type)`` computes the key in Python and keys the Java stream
by a one-field Row holding it, converted to ``key_type`` (when no type is declared, the key's
pickled bytes, as cloudpickle writes them: ``Types.PICKLED_BYTE_ARRAY()``). The subtask of a
key follows from that Row's ``hashCode()``, which :func:`pyflink_key_hash` computes.
"""

from __future__ import annotations

import pickle
from typing import Any

from flowmagic.api.types import PICKLED, Row, TypeInformation
from flowmagic.errors import KeyRoutingError
from flowmagic.key_groups import java_boxed_hash_code, java_byte_array_hash

__all__ = ["pyflink_key_hash"]

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


def _pickled_hash(value: Any) -> int:
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        raise KeyRoutingError(
            f"This key ({type(value).__name__}) cannot be pickled, as PyFlink pickles a key_by key declared "
            f"without key_type: {error}"
        ) from error
    return java_byte_array_hash(data)


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
    (:data:`~flowmagic.api.types.PICKLED` when it declared none).

    Keys of built-in types (numbers, strings, bytes, None, tuples of them) pickle to the
    same bytes under ``pickle`` as under cloudpickle; an object of a class pickles with its
    module's name, which differs between a flowmagic and a PyFlink program.
    """
    return _row_hash([_typed_hash(key, key_type)], 0)
