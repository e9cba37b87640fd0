"""What a Python worker keeps between a continuous job's epochs, and when it forgets it.

Each worker keeps the live subtasks and the unpickled plans of the runs it served; entries
that can never be used again (a run's older epochs, finished or long idle runs, runs beyond
the latest few) are dropped, since a subtask not found restores from the manifest.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

import flowmagic
from flowmagic.runtime.continuous import epoch
from flowmagic.runtime.continuous.epoch import MAX_RUNS, RUN_IDLE_SECONDS, EpochContext, _evict, run_epoch
from flowmagic.runtime.continuous.storage import Storage
from flowmagic.runtime.plan import build_plans


@pytest.fixture(autouse=True)
def _worker(monkeypatch) -> None:
    """A fresh worker's memory (the module's tables), for each test."""
    monkeypatch.setattr(epoch, "_LIVE", {})
    monkeypatch.setattr(epoch, "_PLANS", {})
    monkeypatch.setattr(epoch, "_SEEN", {})


def _keep(run: str, vertex: str, index: int, completed: int) -> None:
    sentinel: Any = object()
    epoch._LIVE[(run, vertex, index)] = (completed, sentinel)
    epoch._PLANS[(run, vertex, index)] = sentinel


def test_a_new_epoch_drops_the_runs_subtasks_that_can_no_longer_go_on() -> None:
    _evict("run", 2, now=0.0)
    _keep("run", "v", 0, completed=1)  # moved here, then away: it can never continue
    _keep("run", "v", 1, completed=2)  # goes on in epoch 3 if it comes here
    _keep("run", "w", 0, completed=3)  # a sibling that already ran epoch 3 here
    _keep("other", "v", 0, completed=0)
    _evict("run", 2, now=1.0)
    assert set(epoch._LIVE) == {("run", "v", 1), ("run", "w", 0), ("other", "v", 0)}
    # Plans stay while their run does: each subtask of the run may come back.
    assert len(epoch._PLANS) == 4


def test_a_run_not_seen_for_a_while_is_forgotten_and_a_recent_one_kept() -> None:
    _evict("old", -1, now=0.0)
    _keep("old", "v", 0, completed=5)
    _evict("recent", -1, now=RUN_IDLE_SECONDS - 1)
    _keep("recent", "v", 0, completed=0)
    _evict("recent", 0, now=RUN_IDLE_SECONDS + 1)
    assert set(epoch._LIVE) == {("recent", "v", 0)} and set(epoch._PLANS) == {("recent", "v", 0)}
    assert list(epoch._SEEN) == ["recent"]


def test_a_worker_keeps_the_latest_runs_only() -> None:
    runs = [f"run-{i}" for i in range(MAX_RUNS)]
    for moment, run in enumerate(runs):
        _evict(run, -1, now=float(moment))
        _keep(run, "v", 0, completed=0)
    assert len(epoch._LIVE) == MAX_RUNS
    # The first run comes again, then a new one: the oldest seen (the second) goes.
    _evict(runs[0], 0, now=float(MAX_RUNS))
    _evict("new", -1, now=float(MAX_RUNS + 1))
    kept = {key[0] for key in epoch._LIVE}
    assert kept == set(runs) - {runs[1]}
    assert {key[0] for key in epoch._PLANS} == kept and len(epoch._SEEN) == MAX_RUNS


def test_a_final_epoch_leaves_nothing_behind_and_an_earlier_one_its_live_subtask(tmp_path) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.from_collection([("a", 1), ("b", 2), ("a", 3)]).key_by(lambda p: p[0]).sum(1).print()
    plan = next(p for p in build_plans(env.get_execution_graph()).values() if not p.inputs)
    for final in (False, True):
        context = EpochContext(
            run_id=f"run-{final}",
            epoch=0,
            start_time=0,
            time=100,
            storage=Storage(str(tmp_path)),
            folder=f"state-{final}",
            operator_ids={},
            read_bounded=frozenset({plan.id}),
            end_bounded=True,
            final=final,
        )
        epoch._PLANS[("run-" + str(final), plan.id, 0)] = plan
        reports: list[dict] = []
        list(run_epoch(plan, 0, 0, context, iter(()), time.perf_counter(), reports.append))
        assert len(reports) == 1 and "progress" in reports[0]
    assert set(epoch._LIVE) == {("run-False", plan.id, 0)}
    assert set(epoch._PLANS) == {("run-False", plan.id, 0)}
