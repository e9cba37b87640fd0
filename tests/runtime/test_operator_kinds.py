"""The contract between the API and the runtime: operator kinds, their implementations, and
the lifecycle of the user's function objects (run in-process by the local executor)."""

from __future__ import annotations

import pytest

import flowmagic
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.runtime.registry import implementation, registered_kinds


def test_every_kind_the_api_can_create_has_a_runtime_implementation() -> None:
    assert set(OperatorKind) == registered_kinds()


def test_capabilities_come_from_the_implementations() -> None:
    emitting = {kind for kind in registered_kinds() if implementation(kind).emits_results}
    combinable = {kind for kind in registered_kinds() if implementation(kind).combinable}
    assert emitting == {
        OperatorKind.PRINT,
        OperatorKind.COLLECT,
        OperatorKind.SINK_COMMITTER,
        OperatorKind.SINK_FUNCTION,
        # A SQL query's collect sink and a SQL table's sink (print lines, committed files).
        OperatorKind.SQL_SINK,
        OperatorKind.SQL_COLLECT_SINK,
    }
    assert combinable == {OperatorKind.KEYED_REDUCE, OperatorKind.KEYED_AGGREGATION}


def test_a_misspelt_kind_fails_when_the_spec_is_made() -> None:
    with pytest.raises(ValueError, match="mpa"):
        OperatorSpec("mpa")  # type: ignore[arg-type]


def test_every_kind_has_its_parameters_and_a_spec_with_another_kinds_fails_when_made() -> None:
    from flowmagic.graph.operator_params import FunctionParams, WindowParams
    from flowmagic.graph.operators import PARAMETERS

    assert set(PARAMETERS) == set(OperatorKind)
    with pytest.raises(TypeError, match="operator kind window takes WindowParams, not FunctionParams"):
        OperatorSpec(OperatorKind.WINDOW, FunctionParams(function=len))
    assert PARAMETERS[OperatorKind.WINDOW] is WindowParams


class _Tagged(flowmagic.CoMapFunction):
    """Tags records with what ``open`` saw; fails if a record comes before ``open``."""

    def __init__(self) -> None:
        self.tag: str | None = None
        self.closed = 0

    def open(self, runtime_context) -> None:
        self.tag = f"{runtime_context.get_index_of_this_subtask()}/{runtime_context.get_number_of_parallel_subtasks()}"

    def map1(self, value):
        assert self.tag is not None, "map1 before open()"
        return ("left", value, self.tag)

    def map2(self, value):
        assert self.tag is not None, "map2 before open()"
        return ("right", value, self.tag)


def test_co_map_function_objects_are_opened_before_their_first_record() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    left = env.from_collection([1, 2])
    right = env.from_collection(["x"])
    records = list(left.connect(right).map(_Tagged()).execute_and_collect(executor="local"))
    assert sorted(records, key=str) == [("left", 1, "0/1"), ("left", 2, "0/1"), ("right", "x", "0/1")]


class _Counting(flowmagic.MapFunction):
    def __init__(self) -> None:
        self.seen = 0

    def map(self, value):
        self.seen += 1
        return (value, self.seen)


def test_each_subtask_of_the_local_executor_has_its_own_function_object() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    records = list(env.from_sequence(1, 4).map(_Counting()).execute_and_collect(executor="local"))
    # Subtask 0 reads 1, 2 and subtask 1 reads 3, 4: each counts from 1, as on Spark.
    assert records == [(1, 1), (2, 2), (3, 1), (4, 2)]


def test_every_window_assigner_trigger_and_evictor_has_runtime_behaviour() -> None:
    from flowmagic.runtime.operators import window_assigner_trigger_evictor as behaviour
    from flowmagic.vocabulary import windows

    def concrete(base: type) -> list[type]:
        found, stack = [], [base]
        while stack:
            cls = stack.pop()
            stack.extend(cls.__subclasses__())
            if cls.__module__ == windows.__name__ and cls is not base:
                found.append(cls)
        return found

    default_assigner = behaviour.assign_windows.dispatch(object)
    default_trigger = behaviour.on_element.dispatch(object)
    assert concrete(windows.WindowAssigner)
    for assigner in concrete(windows.WindowAssigner):
        assert behaviour.assign_windows.dispatch(assigner) is not default_assigner, assigner
    for trigger in concrete(windows.Trigger):
        assert behaviour.on_element.dispatch(trigger) is not default_trigger, trigger
    assert behaviour.evict.dispatch(windows.CountEvictor) is not behaviour.evict.dispatch(object)
