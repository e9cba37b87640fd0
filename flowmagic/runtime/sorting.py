"""BATCH execution's sorted inputs: how a keyed operator reads its records in a bounded job.

Flink runs keyed operators of a BATCH job without progressive watermarks: their keyed
inputs (``InputRequirement.SORTED``) are sorted by the key's serialized bytes, compared as
signed bytes, then by timestamp (records without one first), and the operator sees one key
at a time. When the input moves on to the next key, the previous key's timers fire with the
watermark at its maximum, and the watermark drops back for the next key. A two-input
operator with one keyed input reads the other one (``PASS_THROUGH``) first, in arrival
order; with two keyed inputs, both are merged into one order of keys.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any

from flowmagic.runtime.operators.context import adapt
from flowmagic.runtime.operators.operator import Operator

__all__ = ["SortedInputs", "serialized_key"]

_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1
# XOR-ing every byte with 0x80 makes Python's unsigned byte order Java's signed one.
_SIGNED = bytes(b ^ 0x80 for b in range(256))


def _var_length(value: int, out: bytearray) -> None:
    # StringValue's variable-length encoding: 7 bits a byte, low bits first.
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _serialize(key: Any, out: bytearray) -> bool:
    """Append the bytes Flink's serializer writes for ``key``; False for a type it cannot tell."""
    if isinstance(key, bool):
        out.append(1 if key else 0)
    elif isinstance(key, int):
        if _INT_MIN <= key <= _INT_MAX:
            out += struct.pack(">i", key)
        elif _LONG_MIN <= key <= _LONG_MAX:
            out += struct.pack(">q", key)
        else:
            return False
    elif isinstance(key, float):
        out += struct.pack(">d", key)
    elif isinstance(key, str):
        if key.isascii():  # every unit below 0x80 is one byte: the character itself
            _var_length(len(key) + 1, out)
            out += key.encode("ascii")
            return True
        units = key.encode("utf-16-be", "surrogatepass")
        _var_length(len(units) // 2 + 1, out)
        for unit in struct.unpack(f">{len(units) // 2}H", units):
            _var_length(unit, out)
    elif isinstance(key, tuple) and key:
        return all(_serialize(field, out) for field in key)
    else:
        return False
    return True


def serialized_key(key: Any) -> bytes | None:
    """``key`` as Flink's key serializer writes it, remapped so that comparing the bytes
    orders keys as BATCH sorting does; None for keys whose serialization is not modelled."""
    out = bytearray()
    if not _serialize(key, out):
        return None
    return bytes(out).translate(_SIGNED)


class SortedInputs:
    """Holds a BATCH subtask's input, then hands it to the head operator key by key.

    ``key_selectors`` maps each sorted input side (0 for one-input operators, 1/2 for
    two-input ones) to its key selector; other sides pass through. Records without a
    timestamp sort first within their key (Flink reads their timestamp as Long.MIN_VALUE),
    so they are held apart, in arrival order, and need no sorting.
    """

    def __init__(self, key_selectors: dict[int, Callable[[Any], Any]], head: Operator):
        self.selectors = {side: adapt(selector, "get_key") for side, selector in key_selectors.items()}
        self.head = head
        self.pass_through: list[tuple[int, Any, int | None]] = []
        # key -> values (one-input operators) or (side, value) pairs (two-input ones).
        self.untimed: dict[Any, list[Any]] = {}
        # key -> [(timestamp, side, value)] in arrival order.
        self.timed: dict[Any, list[tuple[int, int, Any]]] = {}

    def add_all(self, side: int, data: list[Any], *, stamped: bool) -> None:
        """Hold ``data`` of input ``side``: values, or ``(value, timestamp)`` pairs if ``stamped``."""
        selector = self.selectors.get(side)
        if selector is None:
            pairs = data if stamped else [(value, None) for value in data]
            self.pass_through.extend((side, value, timestamp) for value, timestamp in pairs)
            return
        value = None
        try:
            if stamped:
                timed = self.timed
                for value, timestamp in data:
                    key = selector(value)
                    entries = timed.get(key)
                    if entries is None:
                        timed[key] = [(timestamp, side, value)]
                    else:
                        entries.append((timestamp, side, value))
            else:
                untimed, get = self.untimed, self.untimed.get
                for value in data:
                    key = selector(value)
                    values = get(key)
                    entry = value if side == 0 else (side, value)
                    if values is None:
                        untimed[key] = [entry]
                    else:
                        values.append(entry)
        except Exception as error:
            raise self.head.fail(error, value) from error

    def _keys_in_order(self) -> list[Any]:
        keys = list({**self.untimed, **self.timed})
        serialized: dict[Any, bytes] = {}
        for key in keys:
            form = serialized_key(key)
            if form is None:
                # No model of the serialized form: keys keep the order they first came in.
                return keys
            serialized[key] = form
        return sorted(keys, key=serialized.__getitem__)

    def replay(self) -> Iterator[None]:
        """Process everything held; pause (yield) after the pass-through input and each key."""
        head = self.head
        process = head.process
        for side, value, timestamp in self.pass_through:
            process(value, timestamp, side)
        self.pass_through = []
        yield
        two_inputs = 0 not in self.selectors
        for key in self._keys_in_order():
            untimed = self.untimed.pop(key, None)
            if untimed and two_inputs:
                for side, value in untimed:
                    process(value, None, side)
            elif untimed:
                head.process_batch(untimed)
            timed = self.timed.pop(key, None)
            if timed:
                timed.sort(key=_by_time)
                for timestamp, side, value in timed:
                    process(value, timestamp, side)
            head.finish_key()
            yield


def _by_time(record: tuple[int, int, Any]) -> int:
    return record[0]
