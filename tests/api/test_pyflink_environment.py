"""PyFlink's environment around a program: ``execute()``'s ``JobExecutionResult`` and the
Configuration keys ``get_execution_environment(configuration)`` and ``configure()`` honour.

``conformance/oracle/x74`` holds the graphs Flink 2.3 built from the same configuration.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from conformance_support import CONFORMANCE, actual_documents

from flowmagic.common import Configuration, JobExecutionResult, JobID, Time, WatermarkStrategy
from flowmagic.datastream import StreamExecutionEnvironment
from flowmagic.datastream.connectors import NumberSequenceSource
from flowmagic.datastream.window import TumblingEventTimeWindows
from flowmagic.errors import InvalidArgumentError


def _configuration(**overrides: str) -> Configuration:
    configuration = Configuration()
    settings = {
        "parallelism.default": "3",
        "pipeline.max-parallelism": "64",
        "pipeline.name": "configured job",
        "pipeline.operator-chaining.enabled": "false",
        "pipeline.auto-watermark-interval": "0 ms",
        "no.such.option": "whatever",
        **overrides,
    }
    for key, value in settings.items():
        configuration.set_string(key, value)
    return configuration


def test_execute_returns_pyflinks_job_execution_result() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([1, 2, 3]).map(lambda x: x * 2).print()
    result = env.execute("doubling", executor="local")
    assert isinstance(result, JobExecutionResult)
    job_id = result.get_job_id()
    assert isinstance(job_id, JobID) and re.fullmatch(r"[0-9a-f]{32}", str(job_id))
    assert result.get_net_runtime() == round(result.duration * 1000) and result.get_net_runtime() >= 0
    # Python functions register no accumulators, in PyFlink as here.
    assert result.get_all_accumulator_results() == {} and result.get_accumulator_result("count") is None
    # PyFlink 2.3.0 printed: 'Program execution finished\nJob with JobID 763aeda393c7a82409745213e5d5d107 has
    # finished.\nJob Runtime: 15916 ms\n'
    assert str(result) == (
        f"Program execution finished\nJob with JobID {job_id} has finished.\n"
        f"Job Runtime: {result.get_net_runtime()} ms\n"
    )
    env.from_collection([1]).print()
    assert env.execute(executor="local").get_job_id() != job_id


def test_an_environment_from_a_configuration_builds_what_flink_built() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(_configuration())
    ds = env.from_source(NumberSequenceSource(1, 10), WatermarkStrategy.for_monotonous_timestamps(), "numbers")
    ds.rebalance().print()
    # Flink 2.3 built the same graphs for get_execution_environment(configuration) as for configure().
    expected = json.loads((CONFORMANCE / "oracle/expected/x74_configure_from_configuration.json").read_text())
    actual = actual_documents(env)
    assert actual["stream_graph"] == expected["stream_graph"]
    assert actual["job_graph"] == expected["job_graph"]
    assert actual["job_plan"]["name"] == expected["job_plan"]["name"] == "configured job"
    assert (env.get_parallelism(), env.get_max_parallelism(), env.is_chaining_enabled()) == (3, 64, False)
    # execute() without a name runs under pipeline.name; a name given wins.
    assert env.execute(executor="local").job_name == "configured job"


def test_configure_changes_only_what_the_configuration_sets() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(5)
    env.disable_operator_chaining()
    env.configure(Configuration().set_string("execution.runtime-mode", "batch"))
    assert (env.get_parallelism(), env.is_chaining_enabled(), str(env.get_runtime_mode())) == (5, False, "BATCH")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("parallelism.default", "abc"),
        ("pipeline.operator-chaining.enabled", "yes"),
        ("pipeline.auto-watermark-interval", "soon"),
        ("execution.checkpointing.interval", "often"),
    ],
)
def test_a_value_that_does_not_parse_is_flinks_error(key: str, value: str) -> None:
    with pytest.raises(InvalidArgumentError, match=re.escape(f"Could not parse value '{value}' for key '{key}'.")):
        StreamExecutionEnvironment.get_execution_environment(Configuration().set_string(key, value))


def _late_event_windows(interval: str) -> list[tuple[str, int]]:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("pipeline.auto-watermark-interval", interval).set_string("parallelism.default", "1")
    )
    # The third event is 9 s behind the second: late once a watermark followed the second,
    # which a periodic watermark does when records take longer than its interval.
    events = [("a", 1_000), ("a", 12_000), ("a", 3_000)]
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda event, _ts: event[1])

    def slowly(event: tuple[str, int]) -> tuple[str, int]:
        time.sleep(0.25)
        return event

    counts = (
        env.from_collection(events)
        .map(slowly)
        .assign_timestamps_and_watermarks(strategy)
        .map(lambda event: (event[0], 1))
        .key_by(lambda pair: pair[0])
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .reduce(lambda x, y: (x[0], x[1] + y[1]))
    )
    return list(counts.execute_and_collect(executor="local"))


def test_an_auto_watermark_interval_of_zero_turns_periodic_watermarks_off() -> None:
    assert _late_event_windows("200 ms") == [("a", 1), ("a", 1)]
    # No watermark until the end of input: the event that was late is counted.
    assert _late_event_windows("0") == [("a", 2), ("a", 1)]
