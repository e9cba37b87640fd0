"""Continuous jobs of PyFlink programs send their keys where PyFlink does, and file each key's
state by the key group that routed it, so that savepoints restore at any parallelism.

The subtasks are those real PyFlink 2.3.0 picked (``pyflink_key_routing.json``,
``pyflink_typed_key_routing.json``, recorded from jobs of bounded sources; an unbounded PyFlink
job sent 348 of those keys alike: ``pyflink_continuous_routing``). The tests without Spark
check the rule the exchange and the state store share.
"""

from __future__ import annotations

import ast
import json
import pickle
from typing import Any

import pytest
from conformance_support import CONFORMANCE
from continuous_support import LineServer, Printed, start, wait_for

import flowmagic
from flowmagic.common import Configuration, Types
from flowmagic.datastream import KeyedCoProcessFunction, KeyedProcessFunction, StreamExecutionEnvironment
from flowmagic.datastream.state import ValueStateDescriptor
from flowmagic.errors import IncompatibleStreamsError
from flowmagic.key_groups import (
    assign_key_to_parallel_operator,
    assign_to_key_group,
    compute_key_group_range,
    java_hash_code,
)
from flowmagic.runtime import trust_savepoint
from flowmagic.runtime.continuous.state_store import Manifest, OperatorState, load_keyed, write_keyed
from flowmagic.runtime.continuous.storage import Storage
from flowmagic.runtime.plan import JAVA_KEY_HASH, KeyHash, build_plans

UNTYPED = [
    (parallelism, ast.literal_eval(key), subtask)
    for parallelism, key, subtask in json.loads((CONFORMANCE / "pyflink_key_routing.json").read_text())["rows"]
]
TYPED = json.loads((CONFORMANCE / "pyflink_typed_key_routing.json").read_text())["rows"]
TUPLE_KEY = Types.TUPLE([Types.STRING(), Types.INT()])


def _recorded(key_type: str | None, parallelism: int) -> dict[Any, int]:
    """Where PyFlink sent each key at ``parallelism``. Python counts 1, 1.0 and True one key
    (PyFlink three), so untyped keys are those Python tells apart."""
    if key_type is None:
        return {key: subtask for p, key, subtask in UNTYPED if p == parallelism and not isinstance(key, (bool, float))}
    return {ast.literal_eval(key): subtask for p, name, key, subtask in TYPED if p == parallelism and name == key_type}


# -- the rule, without Spark ----------------------------------------------------------------


def _keyed_count_graph(env: flowmagic.StreamExecutionEnvironment, key_type: Any = None) -> Any:
    env.from_collection([("a", 1)]).key_by(lambda record: record, key_type).process(_Count()).uid("counts").print()
    return env.get_execution_graph()


def test_a_keyed_operator_files_its_state_by_the_rule_its_exchange_routes_by() -> None:
    pyflink = StreamExecutionEnvironment.get_execution_environment()
    pyflink.set_parallelism(2)
    own = flowmagic.StreamExecutionEnvironment(parallelism=2)
    for graph, expected in [
        (_keyed_count_graph(pyflink, TUPLE_KEY), KeyHash(TUPLE_KEY)),
        (
            _keyed_count_graph(StreamExecutionEnvironment.get_execution_environment()),
            KeyHash(Types.PICKLED_BYTE_ARRAY()),
        ),
        (_keyed_count_graph(own, Types.STRING()), KeyHash()),
    ]:
        plans = build_plans(graph)
        (edge,) = [edge for plan in plans.values() for edge in plan.out_edges]
        consumer = plans[edge.consumer]
        assert edge.key_hash == consumer.nodes[consumer.head].key_hash == expected
    assert KeyHash().hash_code is java_hash_code and KeyHash().name == JAVA_KEY_HASH


def test_keyed_inputs_routing_keys_differently_are_flinks_error() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    first = env.from_collection([1, 2]).key_by(lambda x: x, key_type=Types.INT())
    second = env.from_collection([1, 2]).key_by(lambda x: x)
    first.connect(second).process(_Both()).print()
    # What PyFlink 2.3 raises (Java's ConnectedStreams) for the same program.
    with pytest.raises(
        IncompatibleStreamsError,
        match=r"Key types if input KeyedStreams don't match: "
        r"Row\(f0: Integer\) and Row\(f0: PickledByteArrayTypeInfo\)",
    ):
        build_plans(env.get_execution_graph())


def test_state_filed_by_another_rule_is_filed_anew_on_restore(tmp_path) -> None:
    # A snapshot whose keys were filed by their Java hashes (flowmagic's own API, or a PyFlink
    # program's before its continuous jobs routed as PyFlink) restores into subtasks that
    # receive keys as PyFlink routes them: every key lands on the subtask PyFlink sends it to.
    storage = Storage(str(tmp_path))
    recorded = _recorded(None, 3)
    files, checksums = [], {}
    for index in range(2):
        owned = compute_key_group_range(128, 2, index)
        entries = {key: {"count": i} for i, key in enumerate(recorded) if assign_to_key_group(key, 128) in owned}
        files.append(write_keyed(storage, "epoch-0", "op", index, 0, owned, 128, dict(entries), checksums=checksums))
    hash_code = KeyHash(Types.PICKLED_BYTE_ARRAY()).hash_code
    restored = {}
    for index in range(3):
        groups = compute_key_group_range(128, 3, index)
        for key in load_keyed(
            storage, files, groups, lambda key: assign_to_key_group(key, 128, hash_code), checksums=checksums
        ):
            restored[key] = index
    assert restored == recorded
    # Read by their own rule, the files give each key to the subtask of its Java hash.
    java = {
        key: index
        for index in range(3)
        for key in load_keyed(storage, files, compute_key_group_range(128, 3, index), checksums=checksums)
    }
    assert java != recorded and set(java) == set(recorded)


@pytest.mark.parametrize(
    ("recording", "key_type", "parallelism"),
    [("untyped_parallelism_3.txt", Types.PICKLED_BYTE_ARRAY(), 3), ("tuple_parallelism_4.txt", TUPLE_KEY, 4)],
)
def test_the_rule_sends_keys_where_an_unbounded_pyflink_job_did(
    recording: str, key_type: Any, parallelism: int
) -> None:
    # PyFlink's own continuous job (a monitored FileSource) printed where each key went.
    lines = (CONFORMANCE / "pyflink_continuous_routing" / "expected" / recording).read_text().splitlines()
    hash_code = KeyHash(key_type).hash_code
    wrong = []
    for line in lines:
        prefix, record = line.split("> ", 1)
        key, subtask = record.rsplit("|", 1)
        assert int(prefix) == int(subtask) + 1
        if assign_key_to_parallel_operator(ast.literal_eval(key), 128, parallelism, hash_code) != int(subtask):
            wrong.append(line)
    assert len(lines) >= 30 and wrong == []


def test_a_manifest_names_the_rule_and_old_manifests_read_as_javas() -> None:
    manifest = Manifest(epoch=3, time=0, operators={"op": OperatorState(2, 128, key_hash=KeyHash(TUPLE_KEY).name)})
    assert Manifest.from_json(manifest.to_json()).operators["op"].key_hash == KeyHash(TUPLE_KEY).name
    old = json.loads(manifest.to_json())
    del old["operators"]["op"]["key_hash"]
    assert Manifest.from_json(json.dumps(old)).operators["op"].key_hash == JAVA_KEY_HASH


def test_the_rule_pickles_for_the_tasks() -> None:
    rule = pickle.loads(pickle.dumps(KeyHash(TUPLE_KEY)))
    assert rule == KeyHash(TUPLE_KEY) and rule.hash_code(("a", 1)) == KeyHash(TUPLE_KEY).hash_code(("a", 1))


# -- continuous jobs on Spark ---------------------------------------------------------------


class _Count(KeyedProcessFunction):
    """Each key's running count, as ``repr(key)|count``."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        yield f"{ctx.get_current_key()!r}|{count}"


class _Both(KeyedCoProcessFunction):
    def process_element1(self, value: Any, ctx: Any) -> Any:
        yield value

    def process_element2(self, value: Any, ctx: Any) -> Any:
        yield value


def _counting_program(env: StreamExecutionEnvironment, port: int, key_type: Any) -> None:
    # Lines are keys as Python writes them ('word1', 7, ('a', 1)).
    keys = env.socket_text_stream("127.0.0.1", port).map(ast.literal_eval)
    keys.key_by(lambda key: key, key_type).process(_Count()).uid("counts").print()


def _printed(printed: Printed) -> list[tuple[Any, int, int]]:
    """(key, running count, subtask) of every printed line (``N> 'key'|count``)."""
    rows = []
    for line in list(printed.lines):
        prefix, record = line.split("> ", 1)
        key, count = record.rsplit("|", 1)
        rows.append((ast.literal_eval(key), int(count), int(prefix) - 1))
    return rows


def _run(
    env: StreamExecutionEnvironment, key_type: Any, lines: list[str], name: str, savepoint: str | None = None
) -> list[tuple[Any, int, int]]:
    """Send ``lines`` to a continuous job of the counting program and wait for every count;
    then stop it with a savepoint at ``savepoint``, or cancel it."""
    server = LineServer()
    _counting_program(env, server.port, key_type)
    printed = Printed()
    job = start(env, printed, name)
    try:
        server.send(*lines)
        wait_for(lambda: len(printed.lines) >= len(lines), job)
        if savepoint is None:
            job.cancel()
        else:
            job.stop_with_savepoint(savepoint)
    finally:
        server.close()
    return _printed(printed)


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("key_type_name", "key_type", "before", "after"),
    [(None, None, 2, 3), ("TUPLE", TUPLE_KEY, 4, 3)],
    ids=["without key_type", "with key_type"],
)
def test_a_continuous_pyflink_job_routes_keys_as_pyflink_and_a_savepoint_restores_them_elsewhere(
    spark, tmp_path, key_type_name: str | None, key_type: Any, before: int, after: int
) -> None:
    first_routes, second_routes = _recorded(key_type_name, before), _recorded(key_type_name, after)
    keys = sorted(set(first_routes) & set(second_routes), key=repr)
    first_lines = [repr(key) for key in keys] * 2
    second_lines = [repr(key) for key in keys] * 2

    first = StreamExecutionEnvironment.get_execution_environment()
    first.set_parallelism(before)
    savepoint = str(tmp_path / "sp")
    printed = _run(first, key_type, first_lines, "pyflink keys before", savepoint)
    assert sorted(printed, key=repr) == sorted(
        [(key, count, first_routes[key]) for key in keys for count in (1, 2)], key=repr
    )

    configuration = Configuration().set_string("execution.savepoint.path", savepoint)
    second = StreamExecutionEnvironment.get_execution_environment(configuration)
    second.set_parallelism(after)
    printed_after = _run(second, key_type, second_lines, "pyflink keys after")
    # Every key goes on counting from the savepoint, on the subtask PyFlink sends it to.
    assert sorted(printed_after, key=repr) == sorted(
        [(key, count, second_routes[key]) for key in keys for count in (3, 4)], key=repr
    )


@pytest.mark.e2e
def test_an_old_savepoint_of_flowmagics_own_api_restores_into_either_api(spark, tmp_path) -> None:
    # flowmagic's own API files its keys by their Java hashes, as every continuous job did
    # before manifests named the rule (this one's manifest is made to name none). Restored,
    # each program finds each key's count on the subtask its own routing sends the key to.
    keys = sorted(_recorded(None, 3), key=repr)[:60]
    lines = [repr(key) for key in keys]
    own = flowmagic.StreamExecutionEnvironment(parallelism=2)
    savepoint = tmp_path / "sp"
    printed = _run(own, None, lines, "own api", str(savepoint))
    javas = {key: assign_key_to_parallel_operator(key, 128, 2) for key in keys}
    assert sorted(printed, key=repr) == sorted([(key, 1, javas[key]) for key in keys], key=repr)
    manifest = json.loads((savepoint / "_metadata.json").read_text())
    for state in manifest["operators"].values():
        del state["key_hash"]
    (savepoint / "_metadata.json").write_text(json.dumps(manifest))
    # Edited, its manifest no longer verifies: trusted anew, as a user trusts an old savepoint.
    trust_savepoint(str(savepoint))

    configuration = Configuration().set_string("execution.savepoint.path", str(savepoint))
    for env, routes in [
        (flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration), None),
        (StreamExecutionEnvironment.get_execution_environment(configuration), _recorded(None, 3)),
    ]:
        env.set_parallelism(3)
        expected = routes or {key: assign_key_to_parallel_operator(key, 128, 3) for key in keys}
        printed_after = _run(env, None, lines, type(env).__module__)
        assert sorted(printed_after, key=repr) == sorted([(key, 2, expected[key]) for key in keys], key=repr)
