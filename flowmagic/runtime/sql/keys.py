"""The keys of keyed SQL operators, hashed as Flink hashes its ``BinaryRowData`` keys.

Flink keys a SQL operator by a ``BinaryRowData`` of the key fields; its ``hashCode()`` is the
32-bit Murmur3 (seed 42) of the row's bytes, word by word: an 8-byte header (the row kind,
then a null bit per field), then 8 bytes per field (little-endian numbers; a string of up to 7
bytes inline with ``0x80 | length`` in its last byte, a longer one as offset and length of a
variable part after the fixed one, padded to 8 bytes). The key group follows from that hash
as for any key (:mod:`flowmagic.key_groups`), so rows reach the subtasks Flink sends them to.
"""

from __future__ import annotations

import struct
from decimal import Decimal
from operator import itemgetter
from typing import Any

from flowmagic.runtime.sql.values import parse_type

__all__ = ["BinaryRowKey", "RowKey", "binary_row_hash"]

_MASK = 0xFFFFFFFF
#: Hash codes remembered per key type (then forgotten all at once).
_HASH_CACHE_SIZE = 100_000


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def _murmur_words(data: bytes) -> int:
    """Flink's ``MurmurHashUtil.hashBytesByWords`` (seed 42)."""
    h1 = 42
    for (k1,) in struct.iter_unpack("<I", data):
        k1 = (k1 * 0xCC9E2D51) & _MASK
        k1 = _rotl(k1, 15)
        k1 = (k1 * 0x1B873593) & _MASK
        h1 ^= k1
        h1 = _rotl(h1, 13)
        h1 = (h1 * 5 + 0xE6546B64) & _MASK
    h1 ^= len(data)
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def _slot(value: Any, type_text: str, variable: bytearray, fixed_size: int) -> bytes:
    info = parse_type(type_text)
    name = info.name
    if name in ("INT", "DATE"):
        return struct.pack("<i", value) + b"\0" * 4
    if name == "BIGINT" or info.is_timestamp:
        return struct.pack("<q", value)
    if name == "SMALLINT":
        return struct.pack("<h", value) + b"\0" * 6
    if name in ("TINYINT", "BOOLEAN"):
        return struct.pack("<b", int(value)) + b"\0" * 7
    if name == "DOUBLE":
        return struct.pack("<d", value)
    if name == "FLOAT":
        return struct.pack("<f", value) + b"\0" * 4
    if name == "DECIMAL" and (info.precision or 10) <= 18:
        unscaled = int(Decimal(value).scaleb(info.scale or 0))
        return struct.pack("<q", unscaled)
    data = value.encode("utf-8") if isinstance(value, str) else str(value).encode("utf-8")
    if len(data) <= 7:
        return data.ljust(7, b"\0") + bytes([0x80 | len(data)])
    offset = fixed_size + len(variable)
    variable.extend(data)
    variable.extend(b"\0" * (-len(data) % 8))
    return struct.pack("<q", (offset << 32) | len(data))


def binary_row_hash(fields: tuple[Any, ...], types: tuple[str, ...]) -> int:
    """``BinaryRowData.hashCode()`` of a row of ``fields`` of ``types`` (kind INSERT)."""
    header_size = ((len(fields) + 63 + 8) // 64) * 8
    fixed_size = header_size + 8 * len(fields)
    header = bytearray(header_size)
    variable = bytearray()
    slots = []
    for index, (value, type_text) in enumerate(zip(fields, types, strict=True)):
        if value is None:
            bit = index + 8
            header[bit // 8] |= 1 << (bit % 8)
            slots.append(b"\0" * 8)
        else:
            slots.append(_slot(value, type_text, variable, fixed_size))
    return _murmur_words(bytes(header) + b"".join(slots) + bytes(variable))


class BinaryRowKey(tuple):
    """A SQL operator's key: the tuple of the key fields, hashed (``java_hash_code``) as
    Flink's ``BinaryRowData`` of them (``types`` says how).

    A tuple, so that dictionaries (the exchange's routes, the keyed state) hash and compare it
    in C: a keyed SQL operator looks its key up several times per row. Each key type gets its
    own subclass carrying the types, so a key holds its fields alone."""

    __slots__ = ()
    types: tuple[str, ...] = ()
    # This key type's hash codes already computed, by key.
    hashes: dict[BinaryRowKey, int] = {}

    def __new__(cls, fields: tuple[Any, ...], types: tuple[str, ...]) -> BinaryRowKey:
        return tuple.__new__(_key_class(tuple(types)), fields)

    @property
    def fields(self) -> tuple[Any, ...]:
        return tuple(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return BinaryRowKey, (tuple(self), self.types)

    def __repr__(self) -> str:
        return f"BinaryRowKey{tuple(self)!r}"

    def java_hash_code(self, hash_of: Any) -> int:
        hashes = self.hashes
        found = hashes.get(self)
        if found is None:
            if len(hashes) > _HASH_CACHE_SIZE:
                hashes.clear()
            found = hashes[self] = binary_row_hash(tuple(self), self.types)
        return found


# Key types -> the BinaryRowKey subclass of their keys.
_CLASSES: dict[tuple[str, ...], type[BinaryRowKey]] = {}


def _key_class(types: tuple[str, ...]) -> type[BinaryRowKey]:
    found = _CLASSES.get(types)
    if found is None:
        found = _CLASSES[types] = type("BinaryRowKey", (BinaryRowKey,), {"__slots__": (), "types": types, "hashes": {}})
    return found


#: A key selector remembers the keys of this many distinct field values (then starts over).
KEY_CACHE_SIZE = 1 << 16


class RowKey:
    """The key selector of a keyed SQL operator: the row's fields at ``indexes`` (of Flink
    types ``types``), as a :class:`BinaryRowKey`. It hands out one key object per distinct
    fields (a cache of recent ones), so that a row's key costs a lookup, not a new object."""

    __slots__ = ("_class", "_fields_of", "_keys", "indexes", "types")

    def __init__(self, indexes: tuple[int, ...], types: tuple[str, ...] = ()):
        self.indexes = tuple(indexes)
        self.types = tuple(types) if types else ("STRING",) * len(self.indexes)
        # What identifies a row's key in the cache: its one field, or the tuple of its fields.
        self._fields_of: Any = itemgetter(*self.indexes) if self.indexes else _no_fields
        self._keys: dict[Any, BinaryRowKey] = {}
        self._class = _key_class(self.types)

    def __call__(self, row: Any) -> BinaryRowKey:
        fields = self._fields_of(row)
        key = self._keys.get(fields)
        return self.key_of_fields(fields) if key is None else key

    def key_of_fields(self, fields: Any) -> BinaryRowKey:
        """The key of what ``_fields_of`` returned for a row, made and remembered."""
        keys = self._keys
        if len(keys) >= KEY_CACHE_SIZE:
            keys.clear()
        key = keys[fields] = tuple.__new__(self._class, (fields,) if len(self.indexes) == 1 else fields)
        return key

    @property
    def fields_of(self) -> Any:
        """``fields_of(row)``: what identifies the row's key in :attr:`keys` (its one field, or
        the tuple of its fields)."""
        return self._fields_of

    @property
    def keys(self) -> dict[Any, BinaryRowKey]:
        """The remembered keys, by what :attr:`fields_of` returns (misses go to
        :meth:`key_of_fields`)."""
        return self._keys

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RowKey) and (other.indexes, other.types) == (self.indexes, self.types)

    def __hash__(self) -> int:
        return hash((self.indexes, self.types))

    def __reduce__(self) -> tuple[Any, ...]:
        return RowKey, (self.indexes, self.types)

    def __repr__(self) -> str:
        return f"RowKey({self.indexes!r})"


def _no_fields(row: Any) -> tuple[()]:
    return ()
