"""Incremental snapshots of window operators (the continuous mode's checkpoints), in process.

Each case runs a window operator epoch by epoch as a continuous job's subtask does: a whole
snapshot first, then only the keys whose windows changed (their elements, or their timers
firing). Reading the whole snapshot and its changes back must give the live state, and a
restore at another parallelism must go on exactly as the live operator does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import flowmagic
from flowmagic import (
    AggregateFunction,
    CountEvictor,
    CountTrigger,
    EventTimeSessionWindows,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    ProcessWindowFunction,
    PurgingTrigger,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    ValueStateDescriptor,
    WatermarkStrategy,
)
from flowmagic.datastream import DataStream, KeyedStream
from flowmagic.datastream.window import (
    ContinuousEventTimeTrigger,
    CountSlidingWindowAssigner,
    CountTumblingWindowAssigner,
    EventTimeTrigger,
)
from flowmagic.graph.operators import OperatorKind
from flowmagic.key_groups import assign_to_key_group, compute_key_group_range
from flowmagic.runtime.clock import EpochClock
from flowmagic.runtime.continuous.state_store import Checksum, StateFile, load_keyed, write_keyed
from flowmagic.runtime.continuous.storage import Storage
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.plan import build_plans
from flowmagic.runtime.registry import implementation

MAX_PARALLELISM = 128
KEYS = [f"k{i}" for i in range(24)]

Event = tuple[str, int, int]
Windowing = Callable[[KeyedStream], DataStream]


class _Average(AggregateFunction):
    def create_accumulator(self):
        return (0, 0)

    def add(self, value, accumulator):
        return (accumulator[0] + value[2], accumulator[1] + 1)

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return (a[0] + b[0], a[1] + b[1])


class _FiringsAndTotal(ProcessWindowFunction):
    """Keeps a count of firings per window (window state) and a running total per key
    (global state); the window's count goes with the window."""

    def process(self, key, context, elements):
        firings = context.window_state().get_state(ValueStateDescriptor("firings", None))
        firings.update((firings.value() or 0) + 1)
        total = context.global_state().get_state(ValueStateDescriptor("total", None))
        total.update((total.value() or 0) + sum(e[2] for e in elements))
        return [(key, context.window().start, firings.value(), total.value())]

    def clear(self, context):
        context.window_state().get_state(ValueStateDescriptor("firings", None)).clear()


CASES: dict[str, Windowing] = {
    "tumbling, sum, allowed lateness": lambda keyed: (
        keyed.window(TumblingEventTimeWindows.of(Time.milliseconds(10))).allowed_lateness(15).sum(2)
    ),
    "sliding, window and global state": lambda keyed: keyed.window(
        SlidingEventTimeWindows.of(Time.milliseconds(20), Time.milliseconds(10))
    ).process(_FiringsAndTotal()),
    "sessions, continuous trigger, aggregate": lambda keyed: (
        keyed.window(EventTimeSessionWindows.with_gap(Time.milliseconds(12)))
        .trigger(ContinuousEventTimeTrigger.of(Time.milliseconds(5)))
        .aggregate(_Average())
    ),
    "global, count trigger, evictor": lambda keyed: (
        keyed.window(GlobalWindows.create())
        .trigger(CountTrigger.of(3))
        .evictor(CountEvictor.of(2))
        .reduce(lambda a, b: (a[0], b[1], a[2] + b[2]))
    ),
    "processing time, tumbling": lambda keyed: keyed.window(
        TumblingProcessingTimeWindows.of(Time.milliseconds(10))
    ).sum(2),
    # A fired window keeps only its cleanup timer, until late elements come.
    "purging trigger, lateness": lambda keyed: (
        keyed.window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .trigger(PurgingTrigger.of(EventTimeTrigger.create()))
        .allowed_lateness(8)
        .sum(2)
    ),
    # PyFlink's count windows: a per-key count in keyed state; fired windows are dropped.
    "PyFlink's sliding count windows": lambda keyed: keyed.window(CountSlidingWindowAssigner.of(3, 2)).sum(2),
    "PyFlink's tumbling count windows, process": lambda keyed: keyed.window(CountTumblingWindowAssigner.of(2)).process(
        lambda key, context, elements: [(key, context.window().id, [e[2] for e in elements])]
    ),
    "processing-time sessions": lambda keyed: keyed.window(
        ProcessingTimeSessionWindows.with_gap(Time.milliseconds(9))
    ).reduce(lambda a, b: (a[0], b[1], a[2] + b[2])),
}


def _operator(windowing: Windowing, index: int = 0, parallelism: int = 1) -> tuple[Operator, list[Any]]:
    """A window operator built as the program ``windowing`` declares it (own function objects)."""
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])
    windowing(env.from_collection([("k", 0, 0)]).assign_timestamps_and_watermarks(strategy).key_by(lambda e: e[0]))
    (params,) = [
        node.operator.params
        for plan in build_plans(env.get_execution_graph()).values()
        for node in plan.nodes.values()
        if node.operator.kind is OperatorKind.WINDOW
    ]
    task = TaskInfo("window", index, parallelism, MAX_PARALLELISM, 0, batch=False, clock=EpochClock(0))
    operator = implementation(OperatorKind.WINDOW)("window", params, task)
    emitted: list[Any] = []
    operator.output.targets.append(lambda value, timestamp: emitted.append((value, timestamp)))
    operator.output.seal()
    operator.open()
    return operator, emitted


def _epochs(count: int, first: int = 0) -> list[tuple[list[Event], int]]:
    """Epochs of events of a few keys each (times rising, some out of order), and the time
    (watermark and processing time) each ends at."""
    epochs = []
    for epoch in range(first, first + count):
        keys = [*KEYS[(epoch * 5) % len(KEYS) :][:5], "k0"]
        events = [(key, epoch * 7 + offset * 3, offset + 1) for offset, key in enumerate(keys)]
        events.append((keys[1], epoch * 7 - 9, 100))  # behind the watermark: late for some windows
        epochs.append((events, epoch * 7 + 4))
    return epochs


def _run(operator: Operator, events: list[Event], until: int) -> None:
    # As in a continuous job, an epoch's input is read at the time the previous epoch ended.
    clock: EpochClock = operator.task.clock  # type: ignore[assignment]
    for event in events:
        operator.process(event, event[1])
    operator.process_watermark(until)
    clock.time = until
    operator.advance_processing_time(until)


def _snapshot(
    operator: Operator, root: Storage, epoch: int, whole: bool, checksums: dict[str, Checksum]
) -> tuple[StateFile, set[Any]]:
    """Write the operator's snapshot as an epoch does: whole, or its changed keys (None for
    a key with nothing left); its checksum goes into ``checksums``."""
    changed = operator.take_changed_keys()
    entries: dict[Any, dict[str, Any] | None] = dict(operator.snapshot_keyed(None if whole else changed))
    if not whole:
        entries.update((key, None) for key in changed if key not in entries)
    everything = range(0, MAX_PARALLELISM)
    written = write_keyed(root, f"epoch-{epoch}", "op", 0, 0, everything, MAX_PARALLELISM, entries, checksums=checksums)
    return written, changed


@pytest.mark.parametrize("case", list(CASES))
def test_a_whole_snapshot_and_its_changes_restore_the_live_windows_at_any_parallelism(case, tmp_path) -> None:
    windowing = CASES[case]
    live, emitted = _operator(windowing)
    assert live.track_changes()
    root = Storage(str(tmp_path))
    files = []
    checksums: dict[str, Checksum] = {}
    for epoch, (events, until) in enumerate(_epochs(8)):
        held_before = set(live.snapshot_keyed())
        _run(live, events, until)
        written, changed = _snapshot(live, root, epoch, epoch == 0, checksums)
        files.append(written)
        # A key changes by its elements or its timers (so only if it held state before).
        assert changed <= {event[0] for event in events} | held_before
        assert len(changed) < len(KEYS)
    everything = range(0, MAX_PARALLELISM)
    assert load_keyed(root, files, everything, checksums=checksums) == live.snapshot_keyed()
    assert emitted, "the case fires windows"

    # Three new subtasks each take their key groups' state and go on as the live one does.
    restored = []
    for index in range(3):
        operator, output = _operator(windowing, index, 3)
        key_groups = compute_key_group_range(MAX_PARALLELISM, 3, index)
        operator.restore_keyed(load_keyed(root, files, key_groups, checksums=checksums))
        operator.task.clock.time = live.task.clock.now()  # type: ignore[attr-defined]
        operator.process_watermark(live.watermark)  # type: ignore[attr-defined]
        restored.append((operator, output, key_groups))
    assert _merged(restored) == live.snapshot_keyed()
    emitted.clear()
    for events, until in _epochs(6, first=8):
        for operator, _output, key_groups in restored:
            mine = [e for e in events if assign_to_key_group(e[0], MAX_PARALLELISM) in key_groups]
            _run(operator, mine, until)
        _run(live, events, until)
    restored_output = [record for _operator_, output, _groups in restored for record in output]
    assert emitted and sorted(restored_output, key=repr) == sorted(emitted, key=repr)
    assert _merged(restored) == live.snapshot_keyed()


def _merged(subtasks: list[tuple[Operator, list[Any], range]]) -> dict[Any, Any]:
    """The whole state of the subtasks of an operator, together."""
    whole: dict[Any, Any] = {}
    for operator, _output, _groups in subtasks:
        whole.update(operator.snapshot_keyed())
    return whole


def test_an_epoch_snapshots_only_the_keys_it_changed_and_a_key_whose_windows_went_as_none(tmp_path) -> None:
    live, emitted = _operator(CASES["tumbling, sum, allowed lateness"])
    live.track_changes()
    _run(live, [(key, 1, 1) for key in KEYS], 5)
    live.take_changed_keys()
    _run(live, [("k1", 6, 1)], 6)
    changed = live.take_changed_keys()
    assert changed == {"k1"}
    assert set(live.snapshot_keyed(changed)) == {"k1"}
    # The window [0, 10) fires at 9 for every key, and its state goes at 24 (lateness 15).
    _run(live, [], 9)
    assert live.take_changed_keys() == set(KEYS) and len(emitted) == len(KEYS)
    _run(live, [], 24)
    gone = live.take_changed_keys()
    assert gone == set(KEYS)
    assert live.snapshot_keyed(gone) == {}
    assert live.windows_of == {}  # type: ignore[attr-defined]
