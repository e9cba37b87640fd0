"""A keyed SQL operator's key: Flink's BinaryRowData hash per key type, one key object per
distinct fields, and the form checkpoints store it in."""

from __future__ import annotations

import pickle

from flowmagic.key_groups import assign_to_key_group, java_hash_code, murmur_hash
from flowmagic.runtime.sql.keys import BinaryRowKey, RowKey, binary_row_hash


def test_equal_fields_of_different_types_hash_as_their_own_binary_rows() -> None:
    # INT 1 and DOUBLE 1.0 are equal in Python but different BinaryRowData bytes in Flink.
    as_int = BinaryRowKey((1,), ("INT",))
    as_double = BinaryRowKey((1.0,), ("DOUBLE",))
    assert binary_row_hash((1,), ("INT",)) != binary_row_hash((1.0,), ("DOUBLE",))
    assert java_hash_code(as_int) == binary_row_hash((1,), ("INT",))
    assert java_hash_code(as_double) == binary_row_hash((1.0,), ("DOUBLE",))
    # Routed by that hash, not as a Flink TupleN of the fields.
    assert assign_to_key_group(as_double, 128) == murmur_hash(binary_row_hash((1.0,), ("DOUBLE",))) % 128


def test_a_row_key_hands_out_one_key_per_distinct_fields() -> None:
    one = RowKey((1,), ("STRING",))
    first = one(("x", "a", 0))
    assert one(("y", "a", 0)) is first
    assert first == BinaryRowKey(("a",), ("STRING",)) and first.types == ("STRING",)
    two = RowKey((0, 2), ("STRING", "INT"))
    key = two(("a", None, 7, 0))
    assert two(("a", "b", 7, 2)) is key and tuple(key) == ("a", 7)
    none = RowKey(())
    assert none((1, 0)) is none((2, 0)) and tuple(none((1, 0))) == ()


def test_a_key_pickles_as_its_fields_and_types() -> None:
    key = RowKey((0,), ("BIGINT",))((5, 0))
    assert key.__reduce__() == (BinaryRowKey, ((5,), ("BIGINT",)))
    restored = pickle.loads(pickle.dumps({key: [1, 1]}))
    (back,) = restored
    assert back == key and back.types == ("BIGINT",) and java_hash_code(back) == java_hash_code(key)
    assert repr(back) == "BinaryRowKey(5,)"
