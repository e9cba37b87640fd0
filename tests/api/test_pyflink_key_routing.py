"""PyFlink's routing of ``key_by`` keys, against where real PyFlink 2.3.0 sent 972 keys
without ``key_type`` (ints, strings, tuples, floats, booleans; parallelism 2 to 4) and 562 with
one (INT, LONG, STRING, DOUBLE, BOOLEAN, TUPLE and ROW keys; parallelism 3 and 4).

PyFlink keys the Java stream by ``Row.of(key)``, the key converted to its ``key_type``, or
pickled when it has none (see ``pyflink_key_routing.json``, ``pyflink_typed_key_routing.json``).
Keys holding PyFlink's own objects (Rows, RowKinds, windows) pickle to the bytes cloudpickle
gave for them under PyFlink (``pyflink_key_pickles.json``), and a program keyed by Rows prints
each key from the subtask PyFlink printed it from (``pyflink_row_key_routing.json``).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import json
import pickle
import sys
from typing import Any

import pytest
from conformance_support import CONFORMANCE

import flowmagic
from flowmagic.datastream import CountWindow, GlobalWindow, KeyedProcessFunction, StreamExecutionEnvironment, TimeWindow
from flowmagic.errors import KeyRoutingError
from flowmagic.key_groups import assign_key_to_parallel_operator, java_byte_array_hash, java_hash_code
from flowmagic.runtime import pyflink_keys
from flowmagic.runtime.pyflink_keys import pyflink_key_hash, pyflink_pickle
from flowmagic.vocabulary.types import PICKLED, Row, RowKind, Types

RECORDED = json.loads((CONFORMANCE / "pyflink_key_routing.json").read_text())
ROWS = [(parallelism, ast.literal_eval(key), subtask) for parallelism, key, subtask in RECORDED["rows"]]
TYPED = json.loads((CONFORMANCE / "pyflink_typed_key_routing.json").read_text())["rows"]
PICKLES = json.loads((CONFORMANCE / "pyflink_key_pickles.json").read_text())["rows"]
ROW_ROUTING = json.loads((CONFORMANCE / "pyflink_row_key_routing.json").read_text())["printed"]
KEY_TYPES = {
    "INT": Types.INT(),
    "LONG": Types.LONG(),
    "STRING": Types.STRING(),
    "DOUBLE": Types.DOUBLE(),
    "BOOLEAN": Types.BOOLEAN(),
    "TUPLE": Types.TUPLE([Types.STRING(), Types.INT()]),
    "ROW": Types.ROW([Types.STRING(), Types.LONG()]),
}


def _pickled(key: Any) -> int:
    return pyflink_key_hash(key, PICKLED)


def _typed_key(name: str, key: str) -> Any:
    value = ast.literal_eval(key)
    return Row(*value) if name == "ROW" else value


def test_every_recorded_key_goes_to_pyflinks_subtask() -> None:
    assert {type(key) for _p, key, _s in ROWS} >= {int, str, tuple, float, bool}
    assert {p for p, _key, _s in ROWS} == {2, 3, 4}
    wrong = [
        (p, key, subtask)
        for p, key, subtask in ROWS
        if assign_key_to_parallel_operator(key, 128, p, _pickled) != subtask
    ]
    assert wrong == []


def test_every_recorded_typed_key_goes_to_pyflinks_subtask() -> None:
    assert {name for _p, name, _key, _s in TYPED} == set(KEY_TYPES)
    wrong = []
    for p, name, key, subtask in TYPED:
        value = _typed_key(name, key)
        route = assign_key_to_parallel_operator(value, 128, p, lambda k, t=KEY_TYPES[name]: pyflink_key_hash(k, t))
        if route != subtask:
            wrong.append((p, name, key, subtask))
    assert wrong == []


def test_javas_routing_of_the_same_keys_differs() -> None:
    # The recorded subtasks are not those of the keys' own Java hashes: the two routings are
    # distinguishable, so the tests below tell which one a job used.
    differing = [
        key for p, key, subtask in ROWS if assign_key_to_parallel_operator(key, 128, p, java_hash_code) != subtask
    ]
    assert len(differing) > len(ROWS) // 3


def test_byte_array_hash_is_javas() -> None:
    # Arrays.hashCode(byte[]) of these pickles (protocol 4), as Java computed it.
    keys = [1, "a", (1, "b"), -5, "Alice"]
    expected = [-89390221, 698589115, 98064860, 812079626, 611364218]
    assert [java_byte_array_hash(pickle.dumps(key, protocol=4)) for key in keys] == expected
    assert java_byte_array_hash(b"") == 1
    assert java_byte_array_hash(bytes([0xFF])) == 31 - 1


def test_a_key_that_cannot_be_pickled_is_named() -> None:
    with pytest.raises(KeyRoutingError, match=r"This key \(generator\) cannot be pickled"):
        pyflink_key_hash((i for i in ()), PICKLED)


class _Where(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.index = runtime_context.get_index_of_this_subtask()

    def process_element(self, value: Any, ctx: Any) -> Any:
        yield ctx.get_current_key(), self.index


# Python counts 1, 1.0 and True one key (flowmagic keeps their state together); PyFlink's
# pickles tell them apart. The job below keys by values Python tells apart.
def _distinct(rows: list[tuple[int, Any, int]]) -> list[tuple[int, Any, int]]:
    return [row for row in rows if not isinstance(row[1], (bool, float))]


@pytest.mark.parametrize("executor", ["local", "spark"])
def test_a_pyflink_program_sends_keys_where_pyflink_does(executor: str, request: pytest.FixtureRequest) -> None:
    if executor == "spark":
        request.getfixturevalue("spark")
    recorded = {key: subtask for p, key, subtask in _distinct(ROWS) if p == 3}
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)
    stream = env.from_collection(list(recorded)).key_by(lambda key: key).process(_Where())
    with stream.execute_and_collect(executor=executor) as results:
        assert dict(results) == recorded


def test_typed_keys_of_a_pyflink_program_go_where_pyflink_sends_them() -> None:
    recorded = {_typed_key(name, key): subtask for p, name, key, subtask in TYPED if p == 4 and name == "LONG"}
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(4)
    keyed = env.from_collection(list(recorded)).key_by(lambda key: key, key_type=Types.LONG())
    with keyed.process(_Where()).execute_and_collect(executor="local") as results:
        assert dict(results) == recorded


def test_flowmagics_own_api_keeps_javas_routing() -> None:
    keys = [f"word{i}" for i in range(60)]
    javas = {key: assign_key_to_parallel_operator(key, 128, 3) for key in keys}
    env = flowmagic.StreamExecutionEnvironment(parallelism=3)
    for key_type in (None, flowmagic.Types.STRING()):
        stream = env.from_collection(keys).key_by(lambda key: key, key_type).process(_Where())
        with stream.execute_and_collect(executor="local") as results:
            assert dict(results) == javas


def _program(name: str) -> str:
    """A program PyFlink ran (``pyflink_programs/``), with only its imports changed."""
    return (CONFORMANCE / "pyflink_programs" / name).read_text().replace("from pyflink", "from flowmagic")


def _keys_of_pyflinks_objects() -> list[Any]:
    namespace: dict[str, Any] = {"__name__": "key_pickles"}
    exec(compile(_program("key_pickles.py"), "key_pickles.py", "exec"), namespace)
    keys: list[Any] = namespace["KEYS"]
    return keys


def _as_recorded(data: bytes) -> str:
    return data.hex() if len(data) <= 4096 else "sha256:" + hashlib.sha256(data).hexdigest()


def test_keys_holding_pyflinks_objects_pickle_to_pyflinks_bytes() -> None:
    keys = _keys_of_pyflinks_objects()
    assert len(keys) == len(PICKLES)
    wrong = [
        name
        for key, (name, recorded) in zip(keys, PICKLES, strict=True)
        if _as_recorded(pyflink_pickle(key)) != recorded
    ]
    assert wrong == []


def test_keys_holding_pyflinks_objects_hash_as_their_pyflink_bytes() -> None:
    # Row.of(byte[]).hashCode() == 62 + Arrays.hashCode(byte[]) (measured on Flink 2.3.0).
    for key, (name, recorded) in zip(_keys_of_pyflinks_objects(), PICKLES, strict=True):
        if not recorded.startswith("sha256:"):
            expected = (62 + java_byte_array_hash(bytes.fromhex(recorded)) + 2**31) % 2**32 - 2**31
            assert (name, _pickled(key)) == (name, expected)
            # Again: a recurring key's hash is kept.
            assert (name, _pickled(key)) == (name, expected)


class _FromPyFlink(pickle.Unpickler):
    # PyFlink's names in its pickles, as flowmagic's objects.
    NAMES = {
        ("pyflink.common.types", "_create_row"): pyflink_keys._create_row,
        ("pyflink.common.types", "RowKind"): RowKind,
        ("pyflink.datastream.window", "TimeWindow"): TimeWindow,
        ("pyflink.datastream.window", "CountWindow"): CountWindow,
        ("pyflink.datastream.window", "GlobalWindow"): GlobalWindow,
    }

    def find_class(self, module: str, name: str) -> Any:
        return self.NAMES.get((module, name)) or super().find_class(module, name)


def test_pyflinks_pickles_of_the_keys_hold_the_keys() -> None:
    for key, (name, recorded) in zip(_keys_of_pyflinks_objects(), PICKLES, strict=True):
        if not recorded.startswith("sha256:"):
            unpickled = _FromPyFlink(io.BytesIO(bytes.fromhex(recorded))).load()
            assert (name, unpickled) == (name, key)


@pytest.mark.parametrize("parallelism", sorted(ROW_ROUTING))
def test_a_program_keyed_by_rows_prints_from_pyflinks_subtasks(
    spark: Any, parallelism: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    printed = io.StringIO()
    monkeypatch.setattr(sys, "argv", ["row_key_routing.py", parallelism])
    with contextlib.redirect_stdout(printed):
        exec(compile(_program("row_key_routing.py"), "row_key_routing.py", "exec"), {"__name__": "__main__"})
    assert sorted(printed.getvalue().splitlines()) == ROW_ROUTING[parallelism]


def test_a_typed_sources_records_are_keyed_as_pyflink_decodes_them(spark) -> None:
    # The collection holds one string object in both fields of each record; PyFlink's Python
    # functions get two strings, whose pickle (the untyped key) has no back-reference. Before
    # flowmagic decoded typed sources' strings anew, 17 of these 30 lines had other prefixes.
    program = CONFORMANCE / "pyflink_programs" / "typed_source_keys.py"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(program.read_text(), str(program), "exec"), {"__name__": "__main__"})
    expected = (CONFORMANCE / "pyflink_programs" / "expected" / "typed_source_keys.txt").read_text()
    assert sorted(printed.getvalue().splitlines()) == sorted(expected.splitlines())
