"""PyFlink's keyed state kinds, state time-to-live, user metrics and broadcast state.

TTL is measured in processing time, which an operator reads from its task's clock: these
tests drive a real :class:`~flowmagic.runtime.clock.EpochClock` (the continuous mode's
clock) by hand, so that expiry is exact; pipelines run on the local executor.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import flowmagic
from flowmagic.common import Time
from flowmagic.datastream.functions import KeyedProcessFunction, RuntimeContext
from flowmagic.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from flowmagic.errors import FlowError, ProgramError
from flowmagic.graph.operator_params import ProcessParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.clock import EpochClock
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.registry import implementation
from flowmagic.vocabulary.functions import AggregateFunction


class _Average(AggregateFunction):
    def create_accumulator(self) -> tuple[int, int]:
        return (0, 0)

    def add(self, value: Any, accumulator: tuple[int, int]) -> tuple[int, int]:
        return (accumulator[0] + value[1], accumulator[1] + 1)

    def get_result(self, accumulator: tuple[int, int]) -> float:
        return accumulator[0] / accumulator[1]

    def merge(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        return (a[0] + b[0], a[1] + b[1])


class _SumAndAverage(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.total = runtime_context.get_reducing_state(ReducingStateDescriptor("total", lambda a, b: a + b))
        self.average = runtime_context.get_aggregating_state(AggregatingStateDescriptor("average", _Average()))

    def process_element(self, value, ctx):
        assert self.total.get() is None or self.average.get() is not None
        self.total.add(value[1])
        self.average.add(value)
        yield ctx.get_current_key(), self.total.get(), self.average.get()


def test_reducing_and_aggregating_state_fold_each_keys_records() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    data = env.from_collection([("a", 1), ("b", 10), ("a", 3), ("a", 5), ("b", 20)])
    records = list(data.key_by(lambda r: r[0]).process(_SumAndAverage()).execute_and_collect(executor="local"))
    assert sorted(records) == [("a", 1, 1.0), ("a", 4, 2.0), ("a", 9, 3.0), ("b", 10, 10.0), ("b", 30, 15.0)]


def test_state_descriptors_are_checked_where_the_program_is_written() -> None:
    with pytest.raises(TypeError, match="ReduceFunction or a callable"):
        ReducingStateDescriptor("total", 42)
    with pytest.raises(TypeError, match="AggregateFunction"):
        AggregatingStateDescriptor("average", lambda a, b: a)
    with pytest.raises(ValueError, match="non-empty str name"):
        ValueStateDescriptor("")
    with pytest.raises(ValueError, match="TTL is expected to be positive"):
        StateTtlConfig.new_builder(Time.seconds(0))
    with pytest.raises(TypeError, match="expects a StateTtlConfig"):
        ValueStateDescriptor("v").enable_time_to_live(Time.seconds(1))  # type: ignore[arg-type]


def test_the_ttl_builder_has_pyflinks_defaults_and_settings() -> None:
    config = StateTtlConfig.new_builder(Time.seconds(1)).build()
    assert config.get_update_type() is StateTtlConfig.UpdateType.OnCreateAndWrite
    assert config.get_state_visibility() is StateTtlConfig.StateVisibility.NeverReturnExpired
    assert config.get_ttl_time_characteristic() is StateTtlConfig.TtlTimeCharacteristic.ProcessingTime
    assert config.is_enabled() and config.get_ttl().to_milliseconds() == 1000
    strategies = config.get_cleanup_strategies()
    assert strategies.is_cleanup_in_background() and not strategies.in_full_snapshot()
    incremental = strategies.get_incremental_cleanup_strategy()
    assert incremental is not None and incremental.get_cleanup_size() == 5
    disabled = StateTtlConfig.new_builder(Time.seconds(1)).disable_cleanup_in_background().build()
    assert disabled.get_cleanup_strategies().get_incremental_cleanup_strategy() is None
    off = StateTtlConfig.new_builder(Time.seconds(1)).set_update_type(StateTtlConfig.UpdateType.Disabled).build()
    assert not off.is_enabled()


# -- TTL against the task's clock -----------------------------------------------------------


def _keyed_operator(function: Any, clock: EpochClock) -> Operator:
    task = TaskInfo("vertex", 0, 1, 128, 0, batch=False, clock=clock)
    params = ProcessParams(function=function, key_selector=str)
    operator = implementation(OperatorKind.KEYED_PROCESS)("op", params, task)
    operator.open()
    return operator


class _Holder(KeyedProcessFunction):
    """Keeps the states of ``descriptors`` for the test to use under the current key."""

    def __init__(self, ttl: StateTtlConfig | None, *descriptors: Any):
        self.ttl = ttl
        self.descriptors = descriptors

    def open(self, runtime_context: RuntimeContext) -> None:
        getters = {
            ValueStateDescriptor: runtime_context.get_state,
            ListStateDescriptor: runtime_context.get_list_state,
            MapStateDescriptor: runtime_context.get_map_state,
        }
        self.states = []
        for descriptor in self.descriptors:
            if self.ttl is not None:
                descriptor.enable_time_to_live(self.ttl)
            self.states.append(getters[type(descriptor)](descriptor))

    def process_element(self, value, ctx):
        return []


def _holder(ttl: StateTtlConfig, *descriptors: Any) -> tuple[Operator, list[Any], EpochClock]:
    clock = EpochClock(0)
    function = _Holder(ttl, *descriptors)
    operator = _keyed_operator(function, clock)
    return operator, function.states, clock


def _at(operator: Operator, key: str) -> None:
    operator.keyed_state.current_key = key


def test_a_value_expires_ttl_after_it_was_written() -> None:
    ttl = StateTtlConfig.new_builder(Time.milliseconds(1000)).build()
    operator, (value,), clock = _holder(ttl, ValueStateDescriptor("v"))
    _at(operator, "a")
    value.update(7)
    clock.time = 999
    assert value.value() == 7
    # OnCreateAndWrite: the read did not renew it; it expires at written + ttl.
    clock.time = 1000
    assert value.value() is None
    value.update(8)
    clock.time = 1999
    assert value.value() == 8


def test_on_read_and_write_renews_on_every_read() -> None:
    ttl = StateTtlConfig.new_builder(Time.milliseconds(1000)).update_ttl_on_read_and_write().build()
    operator, (value,), clock = _holder(ttl, ValueStateDescriptor("v"))
    _at(operator, "a")
    value.update("x")
    for now in (900, 1800, 2700):
        clock.time = now
        assert value.value() == "x"
    clock.time = 3700
    assert value.value() is None


def test_return_expired_if_not_cleaned_up_returns_it_once_and_cleans_it_up() -> None:
    # Without background cleanup: Flink's incremental cleanup runs before each access, so it
    # would remove the value before the read could return it.
    ttl = (
        StateTtlConfig.new_builder(Time.milliseconds(10))
        .return_expired_if_not_cleaned_up()
        .disable_cleanup_in_background()
        .build()
    )
    operator, (value,), clock = _holder(ttl, ValueStateDescriptor("v"))
    _at(operator, "a")
    value.update(1)
    clock.time = 50
    assert value.value() == 1
    assert value.value() is None


def test_list_elements_and_map_entries_expire_one_by_one() -> None:
    ttl = StateTtlConfig.new_builder(Time.milliseconds(100)).disable_cleanup_in_background().build()
    operator, (elements, entries), clock = _holder(ttl, ListStateDescriptor("l"), MapStateDescriptor("m"))
    _at(operator, "a")
    elements.add("old")
    entries.put("old", 1)
    clock.time = 60
    elements.add("new")
    entries["new"] = 2
    assert elements.get() == ["old", "new"] and entries.items() == [("old", 1), ("new", 2)]
    clock.time = 100
    assert elements.get() == ["new"]
    assert entries.keys() == ["new"] and "old" not in entries and entries.get("old") is None
    clock.time = 160
    assert elements.get() == [] and entries.is_empty()


def test_incremental_cleanup_removes_expired_keys_on_access_and_records_them_as_changed() -> None:
    ttl = StateTtlConfig.new_builder(Time.milliseconds(10)).cleanup_incrementally(10, False).build()
    operator, (value,), clock = _holder(ttl, ValueStateDescriptor("v"))
    for key in ("a", "b", "c"):
        _at(operator, key)
        value.update(key)
    assert operator.track_changes()
    clock.time = 20
    _at(operator, "z")
    operator.take_changed_keys()
    value.value()
    # One access of key z checked the other keys and removed their expired values.
    assert operator.snapshot_keyed() == {}
    assert operator.take_changed_keys() == {"a", "b", "c"}


def test_cleanup_for_every_record_needs_no_state_access() -> None:
    ttl = StateTtlConfig.new_builder(Time.milliseconds(10)).cleanup_incrementally(1, True).build()
    operator, (value,), clock = _holder(ttl, ValueStateDescriptor("v"))
    for key in ("a", "b"):
        _at(operator, key)
        value.update(key)
    clock.time = 20
    operator.process("x", None)
    operator.process("y", None)
    assert operator.snapshot_keyed() == {}


def test_cleanup_in_full_snapshot_leaves_expired_values_out_of_checkpoints() -> None:
    ttl = StateTtlConfig.new_builder(Time.milliseconds(10)).disable_cleanup_in_background().cleanup_full_snapshot()
    operator, (value,), clock = _holder(ttl.build(), ValueStateDescriptor("v"))
    _at(operator, "a")
    value.update(1)
    clock.time = 5
    _at(operator, "b")
    value.update(2)
    clock.time = 12
    assert set(operator.snapshot_keyed()) == {"b"}


def test_state_without_ttl_or_with_ttl_disabled_never_expires() -> None:
    off = StateTtlConfig.new_builder(Time.milliseconds(1)).set_update_type(StateTtlConfig.UpdateType.Disabled)
    operator, (value,), clock = _holder(off.build(), ValueStateDescriptor("v"))
    _at(operator, "a")
    value.update(1)
    clock.time = 10**9
    assert value.value() == 1


def test_keyed_state_on_an_unkeyed_stream_is_flinks_error() -> None:
    class Unkeyed(flowmagic.MapFunction):
        def open(self, runtime_context):
            runtime_context.get_reducing_state(ReducingStateDescriptor("r", lambda a, b: a))

        def map(self, value):
            return value

    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    with pytest.raises(FlowError, match=r"Keyed state can only be used on a 'keyed stream'.*\(r\)"):
        list(env.from_collection([1]).map(Unkeyed()).execute_and_collect(executor="local"))


# -- metrics --------------------------------------------------------------------------------


class _Measured(flowmagic.MapFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        group = runtime_context.get_metrics_group().add_group("words")
        self.seen = group.counter("seen")
        self.lengths = group.distribution("lengths")
        self.rate = group.meter("rate", time_span_in_seconds=10)
        self.last = 0
        group.gauge("last_length", lambda: self.last)
        self.subtask = runtime_context.get_index_of_this_subtask()

    def map(self, value):
        self.seen.inc()
        self.lengths.update(len(value))
        self.rate.mark_event(2)
        self.last = len(value)
        return value


def test_user_metrics_are_in_the_final_metrics_per_subtask() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_collection(["a", "bb", "ccc", "dddd"]).rebalance().map(_Measured()).name("Measure").print()
    result = env.execute(executor="local")
    vertex = next(v for v in result.metrics.vertices if v.name.startswith("Measure"))
    reported = [subtask.metrics for subtask in vertex.subtasks]
    # REBALANCE from one source subtask sends a, ccc to one subtask and bb, dddd to the other.
    assert sorted(metrics["Measure.words.seen"] for metrics in reported) == [2, 2]
    distributions = sorted((m["Measure.words.lengths"] for m in reported), key=lambda d: d["min"])
    assert distributions == [
        {"count": 2, "sum": 4, "min": 1, "max": 3, "mean": 2.0},
        {"count": 2, "sum": 6, "min": 2, "max": 4, "mean": 3.0},
    ]
    assert sorted(m["Measure.words.last_length"] for m in reported) == [3, 4]
    assert all(m["Measure.words.rate"]["count"] == 4 for m in reported)


def test_the_live_view_shows_user_metrics() -> None:
    from flowmagic.widgets.job_view import JobView

    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.from_collection(["a", "bb"]).map(_Measured()).name("Measure").print()
    result = env.execute(executor="local")
    view = JobView(env.get_job_graph())
    view.update(result.metrics)
    html = view.to_html()
    assert "Measure.words.seen" in html and "count 2 · sum 3 · min 1 · max 2 · mean 1.5" in html


def test_a_metric_name_registered_twice_as_another_kind_is_an_error() -> None:
    class Twice(flowmagic.MapFunction):
        def open(self, runtime_context):
            runtime_context.get_metrics_group().counter("n")
            runtime_context.get_metrics_group().meter("n")

        def map(self, value):
            return value

    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    with pytest.raises(FlowError, match=re.escape("Name collision: metric 'Map.n' is already registered as a Counter")):
        list(env.from_collection([1]).map(Twice()).execute_and_collect(executor="local"))


# -- broadcast state ------------------------------------------------------------------------

_RULES = MapStateDescriptor("rules", None, None)


class _Rules(flowmagic.KeyedBroadcastProcessFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen"))

    def process_element(self, value, ctx):
        self.seen.add(value)
        rules = ctx.get_broadcast_state(_RULES)
        yield ("event", ctx.get_current_key(), value, rules.get(ctx.get_current_key()))

    def process_broadcast_element(self, value, ctx):
        ctx.get_broadcast_state(_RULES).put(value[0], value[1])
        visited: list = []
        ctx.apply_to_keyed_state(ListStateDescriptor("seen"), lambda key, state: visited.append((key, state.get())))
        yield ("rule", value, sorted(visited))


def test_the_broadcast_side_sees_every_keys_state_with_apply_to_keyed_state() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    events = env.from_collection(["a", "b", "a"])
    rules = env.from_collection([("a", 1), ("b", 2)]).broadcast(_RULES)
    # STREAMING reads input 1 (the events) first, then the broadcast input, in this schedule.
    records = list(events.key_by(lambda e: e).connect(rules).process(_Rules()).execute_and_collect(executor="local"))
    assert records == [
        ("event", "a", "a", None),
        ("event", "b", "b", None),
        ("event", "a", "a", None),
        ("rule", ("a", 1), [("a", ["a", "a"]), ("b", ["b"])]),
        ("rule", ("b", 2), [("a", ["a", "a"]), ("b", ["b"])]),
    ]


def test_the_read_only_side_cannot_write_and_unknown_states_are_flinks_error() -> None:
    class Writes(flowmagic.BroadcastProcessFunction):
        def process_element(self, value, ctx):
            ctx.get_broadcast_state(_RULES).put(value, value)

        def process_broadcast_element(self, value, ctx):
            ctx.get_broadcast_state(MapStateDescriptor("typo", None, None))

    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    stream = env.from_collection([1]).connect(env.from_collection([2]).broadcast(_RULES)).process(Writes())
    with pytest.raises(FlowError, match="has no attribute 'put'"):
        list(stream.execute_and_collect(executor="local"))
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    stream = (
        env.from_collection([1])
        .filter(lambda n: False)
        .connect(env.from_collection([2]).broadcast(_RULES))
        .process(Writes())
    )
    with pytest.raises(FlowError, match="The requested state does not exist"):
        list(stream.execute_and_collect(executor="local"))


def test_broadcast_programs_flink_rejects() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    numbers = env.from_collection([1])
    broadcast = numbers.broadcast(_RULES)
    with pytest.raises(
        ProgramError, match=re.escape("A BroadcastProcessFunction can only be used on a non-keyed stream.")
    ):
        numbers.key_by(lambda n: n).connect(broadcast).process(flowmagic.BroadcastProcessFunction())
    with pytest.raises(
        ProgramError, match=re.escape("A KeyedBroadcastProcessFunction can only be used on a keyed stream.")
    ):
        numbers.connect(broadcast).process(flowmagic.KeyedBroadcastProcessFunction())
    with pytest.raises(ProgramError, match=re.escape("Cannot override partitioning for KeyedStream.")):
        numbers.key_by(lambda n: n).broadcast(_RULES)
    with pytest.raises(TypeError, match="must be MapStateDescriptor"):
        numbers.broadcast(ValueStateDescriptor("v"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="process_broadcast_element"):
        numbers.connect(broadcast).process(flowmagic.ProcessFunction())
    other = flowmagic.StreamExecutionEnvironment(parallelism=1).from_collection([1]).broadcast(_RULES)
    with pytest.raises(flowmagic.FlowError, match="different StreamExecutionEnvironments"):
        numbers.connect(other)


# -- the runtime context ----------------------------------------------------------------------


class _WhoAmI(flowmagic.MapFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.who = (
            runtime_context.get_index_of_this_subtask(),
            runtime_context.get_number_of_parallel_subtasks(),
            runtime_context.get_attempt_number(),
            runtime_context.get_job_parameter("threshold", "none"),
            runtime_context.get_job_parameter("missing", "default"),
        )

    def map(self, value):
        return self.who


def test_the_runtime_context_says_which_subtask_and_the_jobs_parameters() -> None:
    from flowmagic.vocabulary.configuration import Configuration

    configuration = Configuration().set_string("pipeline.global-job-parameters", "threshold:10,mode:fast")
    env = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    env.set_parallelism(2)
    records = list(env.from_sequence(1, 4).map(_WhoAmI()).execute_and_collect(executor="local"))
    assert sorted(set(records)) == [(0, 2, 0, "10", "default"), (1, 2, 0, "10", "default")]
    bad = Configuration().set_string("pipeline.global-job-parameters", "threshold")
    with pytest.raises(ValueError, match=re.escape("pipeline.global-job-parameters")):
        flowmagic.StreamExecutionEnvironment.get_execution_environment(bad)


def test_user_metrics_reach_the_driver_from_spark_executors(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_collection(["a", "bb", "ccc", "dddd"]).rebalance().map(_Measured()).name("Measure").print()
    result = env.execute(spark=spark)
    vertex = next(v for v in result.metrics.vertices if v.name.startswith("Measure"))
    # Sent over the live-metrics socket with each subtask's counters.
    assert sorted(subtask.metrics["Measure.words.seen"] for subtask in vertex.subtasks) == [2, 2]
