"""One subtask's epoch, on an executor: restore (or find) the subtask, run its input, snapshot it.

A Python worker keeps the subtasks it ran (``_LIVE``), so that the next epoch of the same
subtask, when Spark schedules it there, continues the live operators; any other worker,
and every retried attempt, restores the subtask from the previous epoch's manifest (so a
worker may forget what it keeps at any time: see :func:`_evict`). Each
epoch reads its input at the time the previous epoch ended (records arrived in between),
then moves processing time to its own logged time, which fires the timers due by then.
"""

from __future__ import annotations

import functools
import pickle
import posixpath
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from flowmagic.key_groups import assign_to_key_group, compute_key_group_range
from flowmagic.runtime.clock import EpochClock
from flowmagic.runtime.continuous.state_store import (
    Checksum,
    OperatorState,
    StateFile,
    load_keyed,
    load_operator_state,
    load_progress,
    write_keyed,
    write_operator_state,
    write_progress,
)
from flowmagic.runtime.continuous.storage import Storage
from flowmagic.runtime.failures import user_failure
from flowmagic.runtime.metrics import process_name
from flowmagic.runtime.operators.operator import UserFunctionError
from flowmagic.runtime.plan import VertexPlan
from flowmagic.runtime.records import MAX_WATERMARK
from flowmagic.runtime.spark.subtask import failure_marker
from flowmagic.runtime.task import Subtask, SubtaskStats

__all__ = [
    "MAX_RUNS",
    "RUN_IDLE_SECONDS",
    "WHOLE_SNAPSHOT_EVERY",
    "EpochContext",
    "EpochSubtaskFunction",
    "run_epoch",
]

#: How often a subtask writes its whole state rather than its changes: a restore reads at
#: most this many files of one subtask's operator.
WHOLE_SNAPSHOT_EVERY = 10

# (run id, vertex id, subtask) -> (epoch it completed, the live subtask).
_LIVE: dict[tuple[str, str, int], tuple[int, Subtask]] = {}
# (run id, vertex id, subtask) -> the vertex's plan, unpickled once per worker and subtask:
# each subtask needs its own copies of the user's function objects, as Flink deserializes
# them per subtask (a function's open() keeps its subtask's state handles on the object).
_PLANS: dict[tuple[str, str, int], VertexPlan] = {}
# Run id -> when this worker last began an epoch of it (time.monotonic()), oldest first.
_SEEN: dict[str, float] = {}
#: A run none of whose epochs came to a worker for this long is forgotten there.
RUN_IDLE_SECONDS = 600.0
#: A worker keeps the subtasks and plans of at most this many runs, the latest it served.
MAX_RUNS = 8


@dataclass
class EpochContext:
    """What every subtask of one epoch needs to know (plain data, shipped with the tasks)."""

    run_id: str
    epoch: int
    #: When the previous epoch ended (the input's processing time) and when this one does.
    start_time: int
    time: int
    #: The checkpoint directory, and this epoch's folder in it.
    storage: Storage
    folder: str
    #: Node id -> operator id (hex) of every stateful operator.
    operator_ids: dict[int, str]
    #: What to restore a subtask from when it is not live here: operator id -> state, the
    #: storage those files are in, and the run's progress files (None for another run's).
    restore_storage: Storage | None = None
    restore_operators: dict[str, OperatorState] = field(default_factory=dict)
    restore_progress: dict[str, list[str | None]] | None = None
    #: The size and SHA-256 of every file to restore from, as its manifest recorded them
    #: (checked before a file is unpickled).
    restore_checksums: dict[str, Checksum] = field(default_factory=dict)
    #: The plans whose bounded source this epoch reads whole (in a job's first epoch).
    read_bounded: frozenset[str] = frozenset()
    #: Whether bounded sources end their output with this epoch (a job's first: read now,
    #: or finished before the snapshot it was restored from, as Flink's finished tasks).
    end_bounded: bool = False
    #: The job's last epoch: every source has ended, so the job's input ends with it.
    final: bool = False
    #: Whether the epoch completes a checkpoint or a savepoint (part files may roll).
    checkpoint: bool = False
    #: The epoch a live subtask must have completed to go on (the last that ran a job).
    after_epoch: int = -1


def _restore(subtask: Subtask, context: EpochContext) -> None:
    plan, index = subtask.plan, subtask.index
    if context.restore_storage is not None:
        key_groups = compute_key_group_range(plan.max_parallelism, plan.parallelism, index)
        for node_id, operator in subtask.chain.operators.items():
            operator_id = context.operator_ids.get(node_id, "")
            state = context.restore_operators.get(operator_id)
            if state is not None:
                described = f"{plan.nodes[node_id].name!r} ({operator_id})"
                key_hash = plan.nodes[node_id].key_hash
                regroup = None
                if state.key_hash != key_hash.name:
                    # Filed by another rule than the one routing the keys here now.
                    regroup = functools.partial(
                        assign_to_key_group, max_parallelism=plan.max_parallelism, hash_code=key_hash.hash_code
                    )
                checksums = context.restore_checksums
                operator.restore_keyed(
                    load_keyed(
                        context.restore_storage,
                        state.files,
                        key_groups,
                        regroup,
                        checksums=checksums,
                        operator=described,
                    )
                )
                for path in state.operator_state_for(index, plan.parallelism, operator.splits_operator_state):
                    operator.restore_operator_state(
                        load_operator_state(context.restore_storage, path, checksums=checksums, operator=described)
                    )
    progress_files = (context.restore_progress or {}).get(plan.id) or []
    progress_file = progress_files[index] if index < len(progress_files) else None
    if progress_file is not None:
        subtask.restore_progress(load_progress(context.storage, progress_file, checksums=context.restore_checksums))


def _expect_declarations(subtask: Subtask, context: EpochContext) -> None:
    """Tell each operator's keyed state which states the snapshot it restores from declared,
    before its functions open and declare theirs (a state of another kind is refused)."""
    for node_id, operator in subtask.chain.operators.items():
        state = context.restore_operators.get(context.operator_ids.get(node_id, ""))
        if state is not None and operator.backend is not None:
            operator.backend.restored_declarations = {
                name: (declared.kind, declared.type_info) for name, declared in state.states.items()
            }


def _snapshot(subtask: Subtask, context: EpochContext, attempt: int) -> dict[str, Any]:
    """Write the subtask's state: whole in its first epoch and every ``WHOLE_SNAPSHOT_EVERY``
    epochs, else the keys that changed (of operators that record them)."""
    plan, index = subtask.plan, subtask.index
    key_groups = compute_key_group_range(plan.max_parallelism, plan.parallelism, index)
    whole = subtask.snapshot_is_whole(WHOLE_SNAPSHOT_EVERY)
    state: dict[str, tuple[StateFile | None, bool]] = {}
    operator_states: dict[str, str] = {}
    checksums: dict[str, Checksum] = {}
    declarations: dict[str, dict[str, tuple[str, str | None]]] = {}
    sizes: dict[int, tuple[int, int, int]] = {}
    for node_id, operator in subtask.chain.operators.items():
        changed = operator.take_changed_keys() if operator.changed_keys is not None else None
        delta = changed is not None and not whole
        entries: dict[Any, dict[str, Any] | None] = dict(operator.snapshot_keyed(changed if delta else None))
        if delta:
            assert changed is not None
            entries.update((key, None) for key in changed if key not in entries)
        operator_id = context.operator_ids.get(node_id)
        backend = operator.backend
        if operator_id is not None and backend is not None and backend.declarations_changed:
            declarations[operator_id] = dict(backend.declared)
            backend.declarations_changed = False
        if operator_id is not None:
            written = None
            if entries:
                try:
                    written = write_keyed(
                        context.storage,
                        context.folder,
                        operator_id,
                        index,
                        attempt,
                        key_groups,
                        plan.max_parallelism,
                        entries,
                        subtask.groups_of_keys.setdefault(node_id, {}),
                        plan.nodes[node_id].key_hash.hash_code,
                        checksums=checksums,
                    )
                except MemoryError:
                    raise operator.fail(
                        MemoryError(
                            f"the snapshot of the state of {len(entries):,} keys does not fit in the Python "
                            "worker's memory (spark.executor.pyspark.memory, or the executor's memory)"
                        ),
                        has_record=False,
                    ) from None
            state[operator_id] = (written, delta)
            size = 0 if written is None else checksums[written.path].size
            operator_state = operator.snapshot_operator_state()
            if operator_state is not None:
                path = operator_states[operator_id] = write_operator_state(
                    context.storage, context.folder, operator_id, index, attempt, operator_state, checksums=checksums
                )
                size += checksums[path].size
            if backend is not None or operator_state is not None:
                # What the live view's State table shows of a stateful operator.
                sizes[node_id] = (operator.state_keys(), size, operator.pending_timers())
    progress = posixpath.join(context.folder, "progress", f"{plan.id}-{index}-{attempt}.pkl")
    write_progress(context.storage, progress, subtask.snapshot_progress(), checksums=checksums)
    subtask.snapshot_written(whole)
    return {
        "state": state,
        "operator_state": operator_states,
        "declarations": declarations,
        "progress": progress,
        "checksums": checksums,
        "sizes": sizes,
        "whole": whole,
    }


def _source_batches(subtask: Subtask, context: EpochContext, inputs: list[Any]) -> Iterator[list[Any]]:
    source = subtask.chain.source
    assert source is not None
    if not subtask.plan.nodes[subtask.plan.head].bounded:
        # An unbounded source's share of the epoch's input, as its feed on the driver gave it.
        yield from source.epoch_batches(inputs)
    elif subtask.plan.id in context.read_bounded:
        yield from source.batches()


def run_epoch(
    plan: VertexPlan,
    index: int,
    attempt: int,
    context: EpochContext,
    items: Iterator[Any],
    started: float,
    hand_report: Callable[[dict[str, Any]], None],
) -> Iterator[tuple[int, Any, Any]]:
    """Run subtask ``index`` of ``plan`` over its input of epoch ``context.epoch``; its Spark
    task began working for it at ``started`` (``time.perf_counter()``). Its report (state
    files, counters) goes to ``hand_report`` once the subtask's output is all yielded."""
    key = (context.run_id, plan.id, index)
    live = _LIVE.pop(key, None)
    stats = SubtaskStats()
    if live is not None and live[0] == context.after_epoch and attempt == 0:
        subtask = live[1]
        subtask.rebind(stats)
        subtask.info.clock.time = context.start_time  # type: ignore[attr-defined]
    else:
        subtask = Subtask(
            plan, index, attempt, stats, EpochClock(context.start_time), periodic_watermarks=True, run_id=context.run_id
        )
        _expect_declarations(subtask, context)
        subtask.open()
        _restore(subtask, context)
        for operator in subtask.chain.operators.values():
            operator.track_changes()
    clock: EpochClock = subtask.info.clock  # type: ignore[assignment]
    sent_before = subtask.chain.channel_counts()
    if subtask.chain.source is not None:
        inputs = list(items)
        yield from subtask.read_source(_source_batches(subtask, context, inputs))
        bounded = plan.nodes[plan.head].bounded
        if (context.end_bounded and bounded) or (context.final and not bounded):
            yield from subtask.emit_watermark(MAX_WATERMARK)
    else:
        yield from subtask.consume(items)
    clock.time = context.time
    yield from subtask.advance_processing_time(context.time)
    if context.final:
        yield from subtask.end_of_input()
    else:
        yield from subtask.flush(context.checkpoint)
    subtask.records_in_before += stats.records_in
    report = _snapshot(subtask, context, attempt)
    report.update(
        records_in=subtask.records_in_before,
        records_out=subtask.records_out_before + subtask.chain.records_out,
        watermark=subtask.watermark,
        metrics=stats.user_metrics(),
        wakeup=subtask.next_processing_timer(),
        host=process_name(),
        spark_task=_spark_task(),
        channels_added=_added(sent_before, subtask.chain.channel_counts()),
        event_time=subtask.event_time().to_json(),
        # Its Spark task's time working for it: the stage before wrote its input whole, so it
        # never waits for records yet to come (see flowmagic.runtime.backpressure).
        busy_ms=(time.perf_counter() - started) * 1000,
    )
    hand_report(report)
    if context.final:
        _PLANS.pop(key, None)  # the job's input ended with this epoch: it has no next one
    else:
        _LIVE[key] = (context.epoch, subtask)


def _added(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """Records per channel this epoch handed on."""
    return {key: count - before.get(key, 0) for key, count in after.items() if count != before.get(key, 0)}


def _spark_task() -> tuple[int, int] | None:
    """The Spark stage and task id this epoch of the subtask runs as (for the live view)."""
    from pyspark import TaskContext

    task = TaskContext.get()
    return None if task is None else (task.stageId(), task.taskAttemptId())


def _evict(run_id: str, after_epoch: int, now: float) -> None:
    """An epoch of ``run_id`` that goes on from ``after_epoch`` begins on this worker (at
    ``now``): forget the subtasks and plans that cannot or need not be used again.

    A worker hears nothing when a job finishes or is cancelled, and a subtask may move to
    another worker for good; what it keeps of them would stay for the worker's life. Dropping
    a live subtask is always safe: one not found here restores from the manifest (slower,
    never wrong). So the rule is simple:

    - the run's own subtasks that completed an epoch before ``after_epoch`` can never go on
      (only a subtask that completed exactly ``after_epoch`` continues; a run's epochs only
      move forward), while those that completed it, or this epoch already, are kept;
    - runs not seen for ``RUN_IDLE_SECONDS`` are over, or so idle that a restore costs
      nothing that matters next to their pause (an idle job runs no Spark job at all);
    - beyond the ``MAX_RUNS`` latest runs, the oldest go: a notebook that runs job after
      job keeps a bounded number of them, and more jobs at once than that is rare.
    """
    _SEEN.pop(run_id, None)
    _SEEN[run_id] = now
    gone = {run for run, seen in _SEEN.items() if now - seen > RUN_IDLE_SECONDS}
    gone.update(list(_SEEN)[:-MAX_RUNS])
    for run in gone:
        del _SEEN[run]
    for key, (epoch, _subtask) in list(_LIVE.items()):
        if key[0] in gone or (key[0] == run_id and epoch < after_epoch):
            del _LIVE[key]
    for key in [key for key in _PLANS if key[0] in gone]:
        del _PLANS[key]


def _plan(run_id: str, plan_id: str, index: int, payload: bytes) -> VertexPlan:
    key = (run_id, plan_id, index)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = pickle.loads(payload)
    return plan


class EpochSubtaskFunction:
    """What Spark runs for each partition (= subtask) of a vertex in one epoch.

    The plan travels pickled once for the whole run (``payload``, made when the job
    started), and a worker unpickles it once: pickling the user's functions again for every
    epoch would cost tens of milliseconds of each epoch on the driver.
    """

    def __init__(self, plan: VertexPlan, payload: bytes, context: EpochContext, reports: Any):
        self.plan_id, self.name, self.parallelism = plan.id, plan.name, plan.parallelism
        self.payload = payload
        self.context = context
        #: The job's accumulator of epoch reports (see epoch_reports).
        self.reports = reports

    def __call__(self, index: int, items: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        task = TaskContext.get()
        attempt = task.attemptNumber() if task is not None else 0
        started = time.perf_counter()
        try:
            _evict(self.context.run_id, self.context.after_epoch, time.monotonic())
            plan = _plan(self.context.run_id, self.plan_id, index, self.payload)
            key = (self.context.epoch, self.plan_id, index)
            yield from run_epoch(
                plan, index, attempt, self.context, items, started, lambda report: self.reports.add({key: report})
            )
        except (UserFunctionError, SystemExit, KeyboardInterrupt) as error:
            details = user_failure(error, self.name, index, self.parallelism, attempt)
            raise RuntimeError(failure_marker(details)) from None
