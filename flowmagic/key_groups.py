"""Flink's key routing: Java ``hashCode`` -> murmur hash -> key group -> operator index.

Mirrors ``KeyGroupRangeAssignment`` and ``MathUtils.murmurHash``. The runtime routes every
HASH exchange through :func:`assign_key_to_parallel_operator`, so what the ExecutionGraph
explains and what the Spark job does are the same computation.
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable
from typing import Any

from flowmagic.errors import InvalidParallelismError, KeyRoutingError

__all__ = [
    "UPPER_BOUND_MAX_PARALLELISM",
    "assign_key_to_parallel_operator",
    "assign_to_key_group",
    "compute_default_max_parallelism",
    "compute_key_group_range",
    "compute_operator_index_for_key_group",
    "java_boxed_hash_code",
    "java_byte_array_hash",
    "java_hash_code",
    "murmur_hash",
]

UPPER_BOUND_MAX_PARALLELISM = 1 << 15
_DEFAULT_LOWER_BOUND_MAX_PARALLELISM = 1 << 7

_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _to_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value > _INT_MAX else value


def _long_hash(value: int) -> int:
    unsigned = value & 0xFFFFFFFFFFFFFFFF
    return _to_int32(unsigned ^ (unsigned >> 32))


def _big_integer_hash(value: int) -> int:
    # java.math.BigInteger: 31*h + each 32-bit word of |value|, big-endian, times the signum.
    magnitude = abs(value)
    words = []
    while magnitude:
        words.append(magnitude & 0xFFFFFFFF)
        magnitude >>= 32
    h = 0
    for word in reversed(words):
        h = _to_int32(31 * h + word)
    return _to_int32(h * (1 if value > 0 else -1))


_POWERS_OF_31: list[int] = [1]


def _powers_of_31(count: int) -> list[int]:
    while len(_POWERS_OF_31) <= count:
        _POWERS_OF_31.append((_POWERS_OF_31[-1] * 31) & 0xFFFFFFFF)
    return _POWERS_OF_31


def _string_hash(value: str) -> int:
    # String.hashCode = sum(unit[i] * 31^(n-1-i)) mod 2^32, evaluated in C (map/sum) rather
    # than a Python loop per character: routing hashes every distinct key.
    encoded = value.encode("utf-16-be", "surrogatepass")
    count = len(encoded) // 2
    powers = _powers_of_31(count)
    units = struct.unpack(f">{count}H", encoded)
    return _to_int32(sum(map(operator.mul, units, reversed(powers[:count]))))


def java_byte_array_hash(data: bytes) -> int:
    """``Arrays.hashCode(byte[])``: from 1, ``31 * h + b`` for each (signed) byte."""
    count = len(data)
    powers = _powers_of_31(count)
    signed = struct.unpack(f"{count}b", data)
    return _to_int32(powers[count] + sum(map(operator.mul, signed, reversed(powers[:count]))))


def _double_hash(value: float) -> int:
    # Double.doubleToLongBits collapses every NaN to the canonical one.
    bits = 0x7FF8000000000000 if math.isnan(value) else struct.unpack(">q", struct.pack(">d", value))[0]
    return _long_hash(bits)


def _float_hash(value: float) -> int:
    # Float.floatToIntBits collapses every NaN to the canonical one.
    return 0x7FC00000 if math.isnan(value) else struct.unpack(">i", struct.pack(">f", value))[0]


_BOXED_HASHES: dict[str, Callable[[Any], int]] = {
    "Integer": lambda value: _to_int32(int(value)),
    "Short": lambda value: _to_int32(int(value)),
    "Byte": lambda value: _to_int32(int(value)),
    "Long": lambda value: _long_hash(int(value)),
    "Double": lambda value: _double_hash(float(value)),
    "Float": lambda value: _float_hash(float(value)),
    "Boolean": lambda value: 1231 if value else 1237,
    "String": lambda value: _string_hash(str(value)),
}


def java_boxed_hash_code(value: Any, java_type: str) -> int:
    """``hashCode()`` of ``value`` as the boxed Java type ``java_type`` (``Integer``,
    ``Long``, ``Double``, ``Float``, ``Boolean``, ``String``, ``Short``, ``Byte``): a Python
    int typed ``Long`` hashes as a Long even when it fits an Integer. Other types hash as
    :func:`java_hash_code` says."""
    boxed = _BOXED_HASHES.get(java_type)
    return java_hash_code(value) if boxed is None else boxed(value)


def java_hash_code(key: Any) -> int:
    """The ``hashCode()`` Java computes for the value Flink would see for ``key``.

    ``bool`` hashes as Boolean, an ``int`` as Integer when it fits in 32 bits, as Long when
    it fits in 64 and as BigInteger beyond; ``float`` as Double, ``str`` as String (UTF-16
    code units) and ``tuple`` as Flink's ``TupleN`` (``31 * r + h(f)``, no seed, ``None``
    fields count 0); a key whose class has ``java_hash_code(self, hash_of)`` (PyFlink's
    ``Row``, a SQL operator's key tuple) as that method says. Any other key, a list
    included, raises :class:`KeyRoutingError`.
    """
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        if _INT_MIN <= key <= _INT_MAX:
            return key
        if _LONG_MIN <= key <= _LONG_MAX:
            return _long_hash(key)
        return _big_integer_hash(key)
    if isinstance(key, float):
        return _double_hash(key)
    if isinstance(key, str):
        return _string_hash(key)
    if isinstance(key, tuple):
        if type(key) is not tuple:
            # A tuple that says how Java hashes it (a SQL operator's BinaryRowData key).
            own_hash = getattr(type(key), "java_hash_code", None)
            if own_hash is not None:
                return _to_int32(own_hash(key, java_hash_code))
        if not key:
            raise KeyRoutingError("An empty tuple cannot be a key: Flink has no Tuple0 key type.")
        result = 0
        for index, field in enumerate(key):
            field_hash = 0 if field is None else java_hash_code(field)
            result = field_hash if index == 0 else _to_int32(31 * result + field_hash)
        return result
    if key is None:
        raise KeyRoutingError("Assigned key must not be null!")
    # A key type of the API layers (PyFlink's Row) says how Java hashes it, given this function.
    java_hash = getattr(type(key), "java_hash_code", None)
    if java_hash is not None:
        return _to_int32(java_hash(key, java_hash_code))
    if isinstance(key, list):
        # Flink takes a java.util.List key (hashing its elements), but a Python list is
        # unhashable: no keyed state could be kept under it, so a list key is refused.
        raise KeyRoutingError(
            "This type (list) cannot be used as key: a list is mutable and unhashable, so no keyed state "
            "can be kept under it. Return a tuple instead: tuple(...)."
        )
    raise KeyRoutingError(
        f"This type ({type(key).__name__}) cannot be used as key: flowmagic routes a key by its Java hashCode, "
        "known for bool, int, float, str, Rows and tuples of them."
    )


def _multiply(a: int, b: int) -> int:
    return (a * b) & 0xFFFFFFFF


def _rotate_left(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & 0xFFFFFFFF


def _murmur3_pure(code: int) -> int:
    # Murmur3_32 of one 4-byte block, seed 0, in pure Python: executors route keys with it
    # and must need nothing that PySpark does not bring (no C extension such as mmh3).
    k = _multiply(_rotate_left(_multiply(code & 0xFFFFFFFF, 0xCC9E2D51), 15), 0x1B873593)
    h = (_multiply(_rotate_left(k, 13), 5) + 0xE6546B64) & 0xFFFFFFFF
    h ^= 4
    h ^= h >> 16
    h = _multiply(h, 0x85EBCA6B)
    h ^= h >> 13
    h = _multiply(h, 0xC2B2AE35)
    h ^= h >> 16
    return _to_int32(h)


def _murmur3_mmh3(code: int) -> int:
    return int(_mmh3.hash(struct.pack("<i", _to_int32(code)), 0, signed=True))


try:
    import mmh3 as _mmh3
except ImportError:  # an executor with nothing but PySpark: the pure-Python hash, 3x slower
    _murmur3 = _murmur3_pure
else:
    _murmur3 = _murmur3_mmh3


def murmur_hash(code: int) -> int:
    """``MathUtils.murmurHash``: a non-negative int spread from a Java hash code."""
    mixed = _murmur3(code)
    if mixed >= 0:
        return mixed
    return 0 if mixed == _INT_MIN else -mixed


def _check_max_parallelism(max_parallelism: int) -> None:
    if not 0 < max_parallelism <= UPPER_BOUND_MAX_PARALLELISM:
        raise InvalidParallelismError(
            f"Maximum parallelism must be in (0, {UPPER_BOUND_MAX_PARALLELISM}], got {max_parallelism}."
        )


def assign_to_key_group(key: Any, max_parallelism: int, hash_code: Callable[[Any], int] = java_hash_code) -> int:
    """The key group (``0 <= g < max_parallelism``) Flink assigns ``key`` to, given the Java
    ``hashCode`` of what Flink keys by (the key's own, by default)."""
    _check_max_parallelism(max_parallelism)
    return murmur_hash(hash_code(key)) % max_parallelism


def compute_operator_index_for_key_group(max_parallelism: int, parallelism: int, key_group: int) -> int:
    """The subtask owning ``key_group`` when ``parallelism`` subtasks share ``max_parallelism`` groups."""
    return key_group * parallelism // max_parallelism


def assign_key_to_parallel_operator(
    key: Any, max_parallelism: int, parallelism: int, hash_code: Callable[[Any], int] = java_hash_code
) -> int:
    """The index of the subtask that receives ``key`` over a HASH (``key_by``) exchange."""
    if not 0 < parallelism <= max_parallelism:
        raise InvalidParallelismError(f"Parallelism {parallelism} must be in (0, max parallelism {max_parallelism}].")
    group = assign_to_key_group(key, max_parallelism, hash_code)
    return compute_operator_index_for_key_group(max_parallelism, parallelism, group)


def compute_key_group_range(max_parallelism: int, parallelism: int, operator_index: int) -> range:
    """The key groups subtask ``operator_index`` owns (``KeyGroupRangeAssignment``)."""
    start = (operator_index * max_parallelism + parallelism - 1) // parallelism
    end = ((operator_index + 1) * max_parallelism - 1) // parallelism
    return range(start, end + 1)


def compute_default_max_parallelism(parallelism: int) -> int:
    """Flink's default max parallelism: ``min(max(nextPow2(p + p/2), 128), 32768)``."""
    if not 0 < parallelism <= UPPER_BOUND_MAX_PARALLELISM:
        raise InvalidParallelismError(f"Operator parallelism not within bounds: {parallelism}")
    target = parallelism + parallelism // 2
    rounded = 1 << (target - 1).bit_length()
    return min(max(rounded, _DEFAULT_LOWER_BOUND_MAX_PARALLELISM), UPPER_BOUND_MAX_PARALLELISM)
