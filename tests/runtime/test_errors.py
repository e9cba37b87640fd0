"""Bad programs fail with a FlowError subclass that names the operator, in Flink's words."""

from __future__ import annotations

import json

import pytest

import flowmagic
from flowmagic import errors


def _env(parallelism: int = 2) -> flowmagic.StreamExecutionEnvironment:
    return flowmagic.StreamExecutionEnvironment(parallelism=parallelism)


def test_every_error_is_a_flow_error() -> None:
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), flowmagic.FlowError)


def test_forward_across_parallelism_names_both_operators_and_the_cell_line() -> None:
    env = _env()
    env.from_sequence(1, 10).forward().map(lambda x: x).name("my map").set_parallelism(3).print()
    with pytest.raises(errors.ForwardPartitioningError) as raised:
        env.get_execution_plan()
    message = str(raised.value)
    assert "Upstream operation: Source: Sequence Source-1 parallelism: 2" in message
    assert "downstream operation: my map-3 parallelism: 3" in message
    assert "test_errors.py:" in message


@pytest.mark.parametrize("value", [0, -3])
def test_parallelism_must_be_positive(value: int) -> None:
    env = _env()
    with pytest.raises(errors.InvalidParallelismError, match="must be at least 1"):
        env.from_sequence(1, 2).map(lambda x: x).set_parallelism(value)
    with pytest.raises(errors.InvalidParallelismError, match="Parallelism must be at least 1"):
        env.set_parallelism(value)


def test_max_parallelism_bounds() -> None:
    stream = _env().from_sequence(1, 2).map(lambda x: x)
    with pytest.raises(errors.InvalidParallelismError, match="greater than 0"):
        stream.set_max_parallelism(0)
    with pytest.raises(errors.InvalidParallelismError, match="smaller than or equal to 32768"):
        stream.set_max_parallelism(40000)


def test_non_parallel_operators_stay_at_one() -> None:
    env = _env()
    windowed = env.from_sequence(1, 10).count_window_all(3).reduce(lambda a, b: a + b)
    with pytest.raises(errors.InvalidParallelismError, match="non parallel operator must be 1"):
        windowed.set_parallelism(2)
    with pytest.raises(errors.InvalidParallelismError, match="non parallel operator must be 1"):
        env.socket_text_stream("localhost", 9999).set_parallelism(4)


def test_duplicate_uid_is_a_hash_collision() -> None:
    env = _env()
    env.from_sequence(1, 2).uid("same").map(lambda x: x).uid("same").print()
    # As in Flink, the plan does not check the hashes: only the JobGraph does.
    assert [node["type"] for node in json.loads(env.get_execution_plan())["nodes"]][:2] == [
        "Source: Sequence Source",
        "Map",
    ]
    with pytest.raises(errors.HashCollisionError, match='Hash collision on user-specified ID "same"'):
        env.get_job_graph()


def test_connect_and_union_need_streams_of_the_same_environment() -> None:
    a, b = _env(), _env()
    left, right = a.from_sequence(1, 2), b.from_sequence(1, 2)
    with pytest.raises(errors.IncompatibleStreamsError, match="different StreamExecutionEnvironments"):
        left.connect(right)
    with pytest.raises(errors.IncompatibleStreamsError, match="different StreamExecutionEnvironments"):
        left.union(right)
    with pytest.raises(errors.IncompatibleStreamsError, match="expects a DataStream, got list"):
        left.connect([1, 2])
    with pytest.raises(errors.ProgramError, match="two functions"):
        left.connect(a.from_sequence(3, 4)).map(lambda x: x)


def test_event_time_window_without_timestamps_names_the_window() -> None:
    env = _env()
    (
        env.from_collection([("a", 1)])
        .key_by(lambda t: t[0])
        .window(flowmagic.TumblingEventTimeWindows.of(flowmagic.Time.seconds(5)))
        .sum(1)
        .print()
    )
    assert len(env.get_job_graph().vertices) == 2  # the JobGraph builds, as in Flink
    with pytest.raises(errors.MissingTimestampsError) as raised:
        env.get_execution_graph()
    assert "'TumblingEventTimeWindows'" in str(raised.value)
    assert "Source: Collection Source" in str(raised.value)
    assert "Long.MIN_VALUE timestamp" in str(raised.value)


def test_processing_time_windows_and_assigned_timestamps_are_fine() -> None:
    env = _env()
    keyed = (
        env.from_collection([("a", 1)])
        .assign_timestamps_and_watermarks(
            flowmagic.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])
        )
        .key_by(lambda t: t[0])
    )
    keyed.window(flowmagic.TumblingEventTimeWindows.of(flowmagic.Time.seconds(5))).sum(1).print()
    keyed.window(flowmagic.TumblingProcessingTimeWindows.of(flowmagic.Time.seconds(5))).sum(1).print()
    assert env.get_execution_graph().num_subtasks > 0


def test_operator_settings_on_non_operators_are_explained() -> None:
    stream = _env().from_sequence(1, 2).rebalance()
    with pytest.raises(errors.ProgramError, match=r"set_parallelism\(\) can only be called on an operator"):
        stream.set_parallelism(2)


def test_invalid_arguments() -> None:
    env = _env()
    with pytest.raises(errors.ProgramError, match="Collection must not be empty"):
        env.from_collection([])
    with pytest.raises(errors.ProgramError, match="Start of sequence must not be greater than the end"):
        env.from_sequence(5, 1)
    with pytest.raises(errors.ProgramError, match="expects a callable"):
        env.from_sequence(1, 2).map(42)
    with pytest.raises(errors.ProgramError, match="32 character String"):
        env.from_sequence(1, 2).map(lambda x: x).set_uid_hash("xyz")
    with pytest.raises(errors.ProgramError, match="OutputTag id must not be empty"):
        flowmagic.OutputTag("")


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: flowmagic.TumblingEventTimeWindows.of(0), errors.InvalidArgumentError, "window size must be positive"),
        (
            lambda: flowmagic.SlidingEventTimeWindows.of(flowmagic.Time.seconds(10), flowmagic.Time.seconds(5), 5000),
            errors.InvalidArgumentError,
            "abs\\(offset\\) < slide",
        ),
        (
            lambda: flowmagic.EventTimeSessionWindows.with_gap("5s"),
            errors.InvalidTypeError,
            "session gap must be a Time",
        ),
        (lambda: flowmagic.CountTrigger.of(0), errors.InvalidArgumentError, "CountTrigger count must be positive"),
        (lambda: flowmagic.CountEvictor.of(-1), errors.InvalidArgumentError, "CountEvictor count must be positive"),
        (
            lambda: flowmagic.WatermarkStrategy.for_bounded_out_of_orderness(-1),
            errors.InvalidArgumentError,
            "must not be negative",
        ),
        (
            lambda: flowmagic.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(3),
            errors.InvalidTypeError,
            "timestamp assigner",
        ),
        (
            lambda: flowmagic.FileSink.for_row_format("", flowmagic.Encoder.simple_string_encoder()),
            errors.InvalidArgumentError,
            "non-empty",
        ),
        (lambda: flowmagic.FileSink.for_row_format("/tmp/x", "utf-8"), errors.InvalidTypeError, "needs an Encoder"),
        (lambda: flowmagic.Time.seconds("5"), errors.InvalidTypeError, "in seconds must be a number"),
        (lambda: flowmagic.Duration.of_millis(None), errors.InvalidTypeError, "in milliseconds must be a number"),
    ],
)
def test_api_argument_errors_are_flow_errors_and_keep_their_builtin_kind(make, error, message) -> None:
    with pytest.raises(error, match=message) as raised:
        make()
    assert isinstance(raised.value, flowmagic.FlowError)
    assert isinstance(raised.value, ValueError if error is errors.InvalidArgumentError else TypeError)


def test_keyed_stream_methods_on_a_non_keyed_stream_say_what_to_use() -> None:
    stream = _env().from_sequence(1, 10)
    assigner = flowmagic.TumblingProcessingTimeWindows.of(flowmagic.Time.seconds(5))
    with pytest.raises(errors.KeyedStreamRequiredError, match=r"use key_by\(\.\.\.\)\.window\(\.\.\.\), or window_all"):
        stream.window(assigner)
    with pytest.raises(errors.KeyedStreamRequiredError, match=r"use key_by\(\.\.\.\)\.sum\(\.\.\.\)\.$"):
        stream.map(lambda x: (x, 1)).sum(1)
    assert not hasattr(stream, "count_window") and hasattr(stream.key_by(lambda x: x), "count_window")
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        stream.nonexistent  # noqa: B018 - the attribute lookup is the test
