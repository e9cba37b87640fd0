"""Records as PyFlink hands them on: typed Row and Tuple outputs, Row keys, keys by position,
cached streams.

Expected lines and behaviours were recorded with PyFlink 2.3.0 running the same programs with
``pyflink`` in their imports; Row hash codes and key routing on Flink 2.3's JVM
(``org.apache.flink.types.Row.hashCode``, ``KeyGroupRangeAssignment``).
"""

from __future__ import annotations

import pytest

from flowmagic import assign_key_to_parallel_operator
from flowmagic.common import Row, RowKind, Types, WatermarkStrategy
from flowmagic.datastream import CachedDataStream, RuntimeExecutionMode, StreamExecutionEnvironment
from flowmagic.datastream.connectors import NumberSequenceSource
from flowmagic.errors import FlowError, JobFailedError
from flowmagic.key_groups import java_hash_code

NAMED = Types.ROW_NAMED(["name", "n"], [Types.STRING(), Types.INT()])
PAIR = Types.TUPLE([Types.STRING(), Types.INT()])


def _pairs() -> tuple[StreamExecutionEnvironment, object]:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    return env, env.from_collection([("a", 1), ("b", 2), ("a", 3)], type_info=PAIR)


def _printed(env: StreamExecutionEnvironment) -> list[str]:
    return [line for _err, line in env.execute(executor="local").printed]


def test_rows_of_a_row_named_type_carry_its_names() -> None:
    env, pairs = _pairs()
    rows = pairs.map(lambda t: Row(t[0], t[1] * 10), output_type=NAMED)
    rows.map(lambda r: f"{type(r).__name__} {r.name} {r[1]} {r}").print()
    rows.print()
    # PyFlink 2.3.0 printed these lines for the same program.
    assert _printed(env) == [
        "Row a 10 Row(name='a', n=10)",
        "Row b 20 Row(name='b', n=20)",
        "Row a 30 Row(name='a', n=30)",
        "+I[a,10]",
        "+I[b,20]",
        "+I[a,30]",
    ]


@pytest.mark.parametrize(
    ("function", "output_type", "pyflink_says"),
    [
        (lambda t: (t[0], t[1]), Types.ROW([Types.STRING(), Types.INT()]), "'tuple' object has no attribute"),
        (lambda t: [t[0], t[1]], NAMED, "'list' object has no attribute 'get_fields_by_names'"),
        (lambda t: [t[0], t[1]], PAIR, "Expected tuple, got list"),
        (lambda t: Row(t[0], t[1]), PAIR, "Expected tuple, got Row"),
        (lambda t: Row(t[0]), NAMED, "emit a Row of 2 fields (it has 1)"),
    ],
)
def test_a_record_not_of_the_declared_type_fails_the_job_as_in_pyflink(function, output_type, pyflink_says) -> None:
    env, pairs = _pairs()
    pairs.map(function, output_type=output_type).print()
    with pytest.raises(JobFailedError) as failed:
        env.execute(executor="local")
    message = str(failed.value)
    assert f"declares output_type {output_type}" in message and "operator: Map" in message
    assert pyflink_says in message


def test_tuple_types_pass_tuples_on() -> None:
    env, pairs = _pairs()
    pairs.map(lambda t: (t[0], t[1] + 1), output_type=PAIR).map(lambda t: f"{type(t).__name__} {t}").print()
    assert _printed(env) == ["tuple ('a', 2)", "tuple ('b', 3)", "tuple ('a', 4)"]


@pytest.mark.parametrize("key_type", [Types.ROW([Types.STRING()]), None])
def test_row_keys_as_in_pyflink(key_type) -> None:
    env, pairs = _pairs()
    rows = pairs.map(lambda t: Row(name=t[0], n=t[1]), output_type=NAMED)
    summed = rows.key_by(lambda r: Row(r.name), key_type=key_type).reduce(lambda x, y: Row(name=x.name, n=x.n + y.n))
    summed.map(lambda r: str(r)).print()
    assert _printed(env) == ["Row(name='a', n=1)", "Row(name='b', n=2)", "Row(name='a', n=4)"]


# Recorded on Flink 2.3's JVM: Row.of(fields).hashCode() and assignKeyToParallelOperator(row, 128, 4).
JAVA_ROWS = [
    (("k0", 0), 106268, 2),
    (("k1", 1), 106300, 2),
    (("k5", 5), 106428, 0),
    (("", 0), 1953, 1),
    (("héllo", -7), -1099028596, 1),
    ((0,), 62, None),
    ((0, 0, 0), 60574, None),
]


@pytest.mark.parametrize(("fields", "hash_code", "subtask"), JAVA_ROWS)
def test_a_row_key_hashes_and_routes_as_javas_row(fields, hash_code, subtask) -> None:
    assert java_hash_code(Row(*fields)) == hash_code
    if subtask is not None:
        assert assign_key_to_parallel_operator(Row(*fields), 128, 4) == subtask
    # A Row wrapping a row, as PyFlink wraps every key: Flink measured hashCode + 62.
    assert java_hash_code(Row(Row(*fields))) == hash_code + 62
    deleted = Row(*fields)
    deleted.set_row_kind(RowKind.DELETE)
    assert java_hash_code(deleted) == (hash_code + 93 + 2**31) % 2**32 - 2**31


@pytest.mark.parametrize("position", [0, "f0"])
def test_keys_by_position_or_name_are_gone_in_flink_2(position) -> None:
    _env, pairs = _pairs()
    with pytest.raises(FlowError, match=r"removed in Flink 2 .*key_by\(lambda record: record\[0\]\)"):
        pairs.key_by(position)


def test_a_cached_stream_serves_a_second_job() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(1)
    source = env.from_source(NumberSequenceSource(1, 5), WatermarkStrategy.no_watermarks(), "numbers")
    cached = source.map(lambda x: x * 10).cache()
    assert isinstance(cached, CachedDataStream)
    cached.print()
    assert _printed(env) == ["10", "20", "30", "40", "50"]
    # The next job of the same environment reads it: PyFlink 2.3.0 printed 11 ... 51 here.
    cached.map(lambda x: x + 1).print()
    assert _printed(env) == ["11", "21", "31", "41", "51"]
    cached.invalidate()
    with pytest.raises(FlowError, match=r"Cache for KeyedStream is not supported\."):
        source.key_by(lambda x: x).cache()
    with pytest.raises(FlowError, match="cache the stream before it"):
        source.rebalance().cache()
