"""Key routing against the table real Flink 2.3 computed (``KeyGroupRangeAssignment``)."""

from __future__ import annotations

import json

import pytest
from conformance_support import CONFORMANCE

import flowmagic
from flowmagic.key_groups import compute_key_group_range, java_hash_code, murmur_hash

TABLE = json.loads((CONFORMANCE / "key_routing.json").read_text())


def _python_keys():
    for kind, value, java_hash, murmur in TABLE["keys"]:
        if kind == "Long" and -(2**31) <= value < 2**31:
            # A Python int in Integer range is an Integer: its hash differs from a Long's only
            # for negative values, so the Long row is checked through the long formula below.
            continue
        yield kind, value, java_hash, murmur


@pytest.mark.parametrize("implementation", ["_murmur3_pure", "_murmur3_mmh3"])
def test_both_murmur_hashes_match_flinks(implementation, monkeypatch) -> None:
    # Executors without mmh3 (nothing but PySpark) use the pure-Python one.
    from flowmagic import key_groups

    monkeypatch.setattr(key_groups, "_murmur3", getattr(key_groups, implementation))
    for _kind, _value, java_hash, murmur in _python_keys():
        assert key_groups.murmur_hash(java_hash) == murmur


def test_java_hash_codes_and_murmur() -> None:
    checked = 0
    for _kind, value, java_hash, murmur in _python_keys():
        assert java_hash_code(value) == java_hash, value
        assert murmur_hash(java_hash) == murmur, value
        checked += 1
    assert checked > 2000


def test_long_keys_in_int_range_use_the_long_formula() -> None:
    from flowmagic.key_groups import _long_hash

    rows = [row for row in TABLE["keys"] if row[0] == "Long" and -(2**31) <= row[1] < 2**31]
    for _kind, value, java_hash, murmur in rows:
        assert _long_hash(value) == java_hash
        assert murmur_hash(java_hash) == murmur


@pytest.mark.parametrize("routing", TABLE["routing"], ids=lambda r: f"p{r['parallelism']}-maxp{r['max_parallelism']}")
def test_key_groups_and_operator_indexes(routing) -> None:
    max_p, p = routing["max_parallelism"], routing["parallelism"]
    for index, (kind, value, _java_hash, _murmur) in enumerate(TABLE["keys"]):
        if kind == "Long" and -(2**31) <= value < 2**31:
            continue
        assert flowmagic.assign_to_key_group(value, max_p) == routing["key_group"][index], value
        assert flowmagic.assign_key_to_parallel_operator(value, max_p, p) == routing["operator_index"][index], value
        key_group = routing["key_group"][index]
        assert key_group in compute_key_group_range(max_p, p, routing["operator_index"][index])


def test_default_max_parallelism() -> None:
    for parallelism, expected in TABLE["default_max_parallelism"]:
        if expected is None:
            continue
        assert flowmagic.compute_default_max_parallelism(parallelism) == expected, parallelism
    for error in TABLE["default_max_parallelism_errors"]:
        with pytest.raises(flowmagic.FlowError, match=error["message"]):
            flowmagic.compute_default_max_parallelism(error["parallelism"])


def test_check_values_from_the_design_notes() -> None:
    assert java_hash_code("a") == 97
    assert flowmagic.assign_to_key_group("a", 128) == 81
    assert flowmagic.assign_key_to_parallel_operator("a", 128, 2) == 1
    assert flowmagic.assign_key_to_parallel_operator("a", 128, 4) == 2
    assert java_hash_code("hello") == 99162322
    assert flowmagic.assign_to_key_group("hello", 128) == 35
    assert flowmagic.assign_to_key_group(42, 128) == 29
    assert java_hash_code(("a", 1)) == 3008
    assert flowmagic.assign_to_key_group(("a", 1), 128) == 29


def test_other_java_types() -> None:
    assert java_hash_code(True) == 1231 and java_hash_code(False) == 1237
    assert java_hash_code(2**40) == (2**40 ^ (2**40 >> 32)) & 0xFFFFFFFF
    assert java_hash_code(1.5) == 1073217536  # Double.hashCode(1.5)
    assert java_hash_code(float("nan")) == 2146959360
    assert java_hash_code("😀") == 0xD83D * 31 + 0xDE00  # two UTF-16 code units
    assert java_hash_code(("a", None)) == 97 * 31
    assert java_hash_code(2**64) == 31 * 31  # BigInteger 2^64: words [1, 0, 0]


def test_unroutable_keys_are_rejected_clearly() -> None:
    with pytest.raises(flowmagic.FlowError, match="Assigned key must not be null"):
        flowmagic.assign_to_key_group(None, 128)
    with pytest.raises(flowmagic.FlowError, match=r"This type \(dict\) cannot be used as key"):
        flowmagic.assign_to_key_group({}, 128)
    with pytest.raises(flowmagic.FlowError, match=r"This type \(list\) cannot be used as key.*tuple"):
        flowmagic.assign_to_key_group(["a"], 128)
