"""Incremental snapshots of keyed state (the continuous mode's checkpoints), in process.

A keyed operator records the keys whose state changes; a snapshot of changes holds those
keys only (``None`` for a key whose state went), and reading a whole snapshot followed by
its changes, in order, gives the state as it was, at any parallelism.
"""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import Aggregation, KeyedAggregationParams, OperatorParams, ProcessParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.key_groups import compute_key_group_range
from flowmagic.runtime.continuous.state_store import load_keyed, write_keyed
from flowmagic.runtime.continuous.storage import Storage
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.registry import implementation
from flowmagic.vocabulary.functions import KeyedProcessFunction
from flowmagic.vocabulary.state import ValueStateDescriptor

MAX_PARALLELISM = 128


def _operator(kind: OperatorKind, params: OperatorParams) -> Operator:
    task = TaskInfo("vertex", 0, 1, MAX_PARALLELISM, 0, batch=False)
    operator = implementation(kind)("op", params, task)
    operator.open()
    return operator


def test_a_keyed_sum_records_the_keys_it_changed_and_snapshots_only_those() -> None:
    operator = _operator(
        OperatorKind.KEYED_AGGREGATION,
        KeyedAggregationParams(key_selector=lambda p: p[0], aggregation=Aggregation.SUM, position=1),
    )
    assert operator.track_changes()
    operator.process_batch([("a", 1), ("b", 1), ("a", 1)])
    assert operator.take_changed_keys() == {"a", "b"}
    operator.process_batch([("c", 5)])
    changed = operator.take_changed_keys()
    assert changed == {"c"}
    assert operator.snapshot_keyed(changed) == {"c": {"@fold": ("c", 5)}}
    assert set(operator.snapshot_keyed()) == {"a", "b", "c"}


class _ClearsOnSecond(KeyedProcessFunction):
    def open(self, runtime_context) -> None:
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", None))

    def process_element(self, value, ctx, out):
        if self.seen.value() is None:
            self.seen.update(value)
        else:
            self.seen.clear()


def test_keyed_state_reached_through_the_runtime_context_is_recorded_by_its_current_key() -> None:
    function = _ClearsOnSecond()
    operator = _operator(OperatorKind.KEYED_PROCESS, ProcessParams(function=function, key_selector=str))
    assert operator.track_changes()
    for value in ("x", "y", "x"):
        operator.process(value, None)
    changed = operator.take_changed_keys()
    assert changed == {"x", "y"}
    # x's state went: its snapshot of changes says so by leaving it out.
    assert operator.snapshot_keyed(changed) == {"y": {"value:seen": "y"}}


def test_changes_read_after_their_whole_snapshot_give_the_state_at_any_parallelism(tmp_path) -> None:
    root = Storage(str(tmp_path))
    whole = {f"k{i}": {"count": i} for i in range(200)}
    changes: dict[Any, dict[str, Any] | None] = {"k1": None, "k2": {"count": 20}, "new": {"count": 7}}
    everything = range(0, MAX_PARALLELISM)
    checksums: dict = {}
    files = [
        write_keyed(root, "epoch-0", "op", 0, 0, everything, MAX_PARALLELISM, dict(whole), checksums=checksums),
        write_keyed(root, "epoch-1", "op", 0, 0, everything, MAX_PARALLELISM, changes, checksums=checksums),
    ]
    expected = {key: states for key, states in whole.items() if key != "k1"}
    expected.update(k2={"count": 20}, new={"count": 7})
    assert load_keyed(root, files, everything, checksums=checksums) == expected
    restored: dict[Any, Any] = {}
    for index in range(3):
        part = load_keyed(root, files, compute_key_group_range(MAX_PARALLELISM, 3, index), checksums=checksums)
        assert not set(part) & set(restored)
        restored.update(part)
    assert restored == expected


def test_each_subtask_of_a_continuous_job_has_its_own_function_objects() -> None:
    from pyspark import cloudpickle

    import flowmagic
    from flowmagic.runtime.continuous.epoch import _plan
    from flowmagic.runtime.plan import build_plans, pickle_plan

    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_sequence(1, 4).key_by(lambda n: n % 2).process(_ClearsOnSecond()).print()
    (plan,) = [p for p in build_plans(env.get_execution_graph()).values() if p.inputs]
    payload = pickle_plan(plan, cloudpickle.dumps)
    # Two subtasks of a vertex run in one Python worker: their functions' open() keeps each
    # subtask's state handles on the function object, so they must not share one.
    functions = [
        next(node.operator.params.function for node in _plan("run", plan.id, index, payload).nodes.values())
        for index in (0, 1)
    ]
    assert functions[0] is not functions[1]
    assert _plan("run", plan.id, 0, payload) is _plan("run", plan.id, 0, payload)


def test_state_that_names_the_vocabulary_by_its_former_modules_restores(tmp_path) -> None:
    """Savepoints written before the vocabulary left ``flowmagic.api`` name their rows and
    windows by the old modules; they restore all the same."""
    import pickle

    from flowmagic.runtime.continuous.state_store import Checksum, load_operator_state
    from flowmagic.vocabulary.types import Row
    from flowmagic.vocabulary.windows import TimeWindow

    state = {"row": Row(word="a", count=1), "window": TimeWindow(0, 10)}
    # Protocol 0 names globals as text, so the modules can be renamed in place.
    written = pickle.dumps(state, protocol=0).replace(b"flowmagic.vocabulary.", b"flowmagic.api.")
    assert b"flowmagic.api.types" in written and b"flowmagic.api.windows" in written
    root = Storage(str(tmp_path))
    root.write("op/operator-0-0.pkl", written)
    checksums = {"op/operator-0-0.pkl": Checksum.of(written)}
    assert load_operator_state(root, "op/operator-0-0.pkl", checksums=checksums) == state


def test_state_written_before_the_runtime_moved_its_modules_still_restores(tmp_path) -> None:
    """Savepoints written before the runtime's modules moved into operators/, connectors/
    and state/ name a state's TtlValue by its old module; they restore all the same."""
    import pickle

    from flowmagic.runtime.continuous.state_store import Checksum, StateFile
    from flowmagic.runtime.state.state_ttl import TtlValue

    # A value with a time-to-live, pickled when its class was flowmagic.runtime.state_ttl.TtlValue.
    data = pickle.dumps({3: {"k": {"count": TtlValue(7, 1000)}}}, protocol=0)
    data = data.replace(b"flowmagic.runtime.state.state_ttl", b"flowmagic.runtime.state_ttl")
    storage = Storage(str(tmp_path))
    storage.write("state/old.pkl", data)
    restored = load_keyed(
        storage, [StateFile("state/old.pkl", 0, 127)], range(128), checksums={"state/old.pkl": Checksum.of(data)}
    )
    value = restored["k"]["count"]
    assert isinstance(value, TtlValue) and (value.value, value.timestamp) == (7, 1000)
