"""Restarts, stops and cancels of continuous jobs on a real local Spark, as Flink's do.

A failed job restarts from its last completed epoch under Flink's restart strategy and
fails for good only when the strategy says so; a failed savepoint leaves the job running
and no savepoint behind; a cancel returns within seconds whatever user code does; the
client's methods take PyFlink's arguments. The session is ``local[2,4]``: Spark retries a
failed task before the epoch, and the query, fail.
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import pytest
from continuous_support import Printed, start, wait_for

import flowmagic
from flowmagic import errors
from flowmagic.runtime.continuous.job import JobStatus
from flowmagic.vocabulary.configuration import Configuration

pytestmark = pytest.mark.e2e


def _indices(printed: Printed) -> list[int]:
    with printed._lock:
        lines = list(printed.lines)
    return [int(line.split("> ", 1)[-1]) for line in lines]


def _restarting_env(attempts: int, delay: str) -> flowmagic.StreamExecutionEnvironment:
    config = Configuration()
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.attempts", str(attempts))
    config.set_string("restart-strategy.fixed-delay.delay", delay)
    env = flowmagic.StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(300)
    return env


class _FailsUntil:
    """Fails on record ``index`` (noting each failure in ``marks``) until the file ``cured``
    exists: every attempt Spark makes of its task fails, and so the epoch."""

    def __init__(self, marks: Path, index: int, cured: Path):
        self.marks, self.index, self.cured = marks, index, cured

    def __call__(self, value: int) -> int:
        if value == self.index and not self.cured.exists():
            failed = len(os.listdir(self.marks))
            (self.marks / str(failed)).write_text("x")
            raise RuntimeError(f"failure {failed + 1} at record {value}")
        return value


def test_a_failed_job_restarts_from_its_last_epoch_and_loses_and_repeats_nothing(spark, tmp_path) -> None:
    marks, cured = tmp_path / "failures", tmp_path / "cured"
    marks.mkdir()
    env = _restarting_env(2, "3 s")
    env.from_datagen(lambda i: i, rows_per_second=300).map(_FailsUntil(marks, 150, cured)).print()
    printed = Printed()
    job = start(env, printed, "restarts")
    try:
        # The cure comes while the job waits for its restart (or, on a slow machine, before
        # its second, which the strategy allows).
        wait_for(lambda: job.restarts >= 1, job, timeout=240)
        cured.write_text("x")
        wait_for(lambda: len(_indices(printed)) >= 400, job, timeout=240)
        assert job.get_job_status() is JobStatus.RUNNING
    finally:
        job.cancel()
    assert len(os.listdir(marks)) >= 2
    # Every record up to the last epoch's, once: nothing lost by the failed epoch, nothing
    # repeated by the replay of its batch.
    indices = _indices(printed)
    assert sorted(indices) == list(range(len(indices)))
    snapshot = job.snapshot()
    assert snapshot.continuous.restarts == job.restarts >= 1
    assert re.search(r"RuntimeError: failure \d+ at record 150", snapshot.continuous.last_failure)
    from flowmagic.widgets.job_view import JobView

    view = JobView(job.graph.job_graph)
    view.update(snapshot)
    assert "<th>Restarts</th>" in view.to_html() and "at record 150" in view.to_html()


def test_a_failure_that_repeats_fails_the_job_once_fixed_delay_attempts_are_spent(spark, tmp_path) -> None:
    marks = tmp_path / "failures"
    marks.mkdir()
    env = _restarting_env(1, "200 ms")
    env.from_datagen(lambda i: i, rows_per_second=200).map(_FailsUntil(marks, 60, tmp_path / "never")).name(
        "fails"
    ).print()
    job = start(env, Printed(), "fails for good")
    with pytest.raises(errors.JobFailedError) as failure:
        job.wait(300)
    assert job.get_job_status() is JobStatus.FAILED and job.restarts == 1
    # The user's error, of the last of Spark's attempts in the run after the one restart.
    assert len(os.listdir(marks)) >= 2
    message = str(failure.value)
    assert re.search(r"RuntimeError: failure \d+ at record 60", message) and "operator: fails" in message
    assert (
        "Recovery is suppressed by FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=1, backoffTimeMS=200)"
        in message
    )


def test_a_job_without_checkpointing_does_not_restart(spark, tmp_path) -> None:
    marks = tmp_path / "failures"
    marks.mkdir()
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_datagen(lambda i: i, rows_per_second=200).map(_FailsUntil(marks, 30, tmp_path / "never")).print()
    job = start(env, Printed(), "no restart")
    with pytest.raises(errors.JobFailedError, match=r"failure \d+ at record 30"):
        job.wait(300)
    assert job.restarts == 0 and job.restart_strategy.type == "disable"


def _counting(env: flowmagic.StreamExecutionEnvironment) -> None:
    env.from_datagen(lambda i: (f"k{i % 3}", 1), rows_per_second=300).key_by(lambda p: p[0]).sum(1).uid(
        "counts"
    ).print()


def test_a_failed_savepoint_leaves_the_job_running_and_no_savepoint_behind(spark, tmp_path) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _counting(env)
    printed = Printed()
    job = start(env, printed, "savepoint fails")
    try:
        wait_for(lambda: job.epochs >= 2 and printed.pairs(), job)
        # A directory cannot be made under a file.
        blocked = tmp_path / "a file"
        blocked.write_text("x")
        with pytest.raises(errors.JobError, match=r"Failed to take the savepoint to '.*a file/sp'.*goes on running"):
            job.stop_with_savepoint(str(blocked / "sp"))
        # The manifest, written last, cannot be written: the state files copied before go.
        target = tmp_path / "half"
        (target / "_metadata.json").mkdir(parents=True)
        with pytest.raises(errors.JobError, match="Failed to take the savepoint to"):
            job.trigger_savepoint(str(target))
        assert [path for path in target.rglob("*") if path.is_file()] == []
        assert (target / "_metadata.json").is_dir()
        assert job.get_job_status() is JobStatus.RUNNING
        epochs = job.epochs
        wait_for(lambda: job.epochs >= epochs + 2, job)
        savepoint = job.stop_with_savepoint(False, str(tmp_path / "good"))
    finally:
        job.cancel()
    assert job.get_job_status() is JobStatus.FINISHED
    assert savepoint == str(tmp_path / "good") and (tmp_path / "good" / "_metadata.json").exists()
    counts: dict[str, list[int]] = {}
    for key, value in printed.pairs():
        counts.setdefault(key, []).append(value)
    for key, values in counts.items():
        assert values == list(range(1, len(values) + 1)), key


class _Stuck:
    """Sleeps for ever in record ``index`` (after saying so in ``marker``)."""

    def __init__(self, marker: Path, index: int):
        self.marker, self.index = marker, index

    def __call__(self, value: int) -> int:
        if value == self.index:
            self.marker.write_text(str(os.getpid()))
            time.sleep(1000)
        return value


def test_cancel_returns_within_seconds_while_a_user_function_is_stuck(spark, tmp_path) -> None:
    marker = tmp_path / "stuck"
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_datagen(lambda i: i, rows_per_second=200).map(_Stuck(marker, 100)).print()
    job = start(env, Printed(), "stuck")
    wait_for(marker.exists, job)
    began = time.monotonic()
    # In a thread, so that a cancel that hangs fails the test rather than hanging it.
    cancelling = threading.Thread(target=job.cancel, daemon=True)
    cancelling.start()
    cancelling.join(60)
    took = time.monotonic() - began
    assert not cancelling.is_alive(), "cancel() hangs while a user function is stuck"
    assert took < 15, took
    assert job.get_job_status() is JobStatus.CANCELED and job.error is None
    assert job.cancel_details is not None and "cancelled" in job.cancel_details
    # Spark kills the stuck Python worker, and the session runs the next job.
    pid = int(marker.read_text())
    wait_for(lambda: not os.path.exists(f"/proc/{pid}"), timeout=60)
    after = flowmagic.StreamExecutionEnvironment(parallelism=2)
    assert sorted(after.from_collection([1, 2, 3]).map(lambda x: x * 2).execute_and_collect()) == [2, 4, 6]


def test_pyflink_signatures_and_the_configured_savepoint_directory(spark, tmp_path) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    _counting(env)
    job = start(env, Printed(), "no directory")
    try:
        wait_for(lambda: job.epochs >= 1, job)
        with pytest.raises(errors.JobError, match=r"No savepoint directory configured\. .*'execution\.checkpointing"):
            job.trigger_savepoint()
        with pytest.raises(errors.JobError, match=r"No savepoint directory configured"):
            job.stop_with_savepoint(False)
        assert job.get_job_status() is JobStatus.RUNNING
        assert job.trigger_savepoint(savepoint_directory=str(tmp_path / "t")) == str(tmp_path / "t")
    finally:
        job.cancel()

    config = Configuration()
    config.set_string("execution.checkpointing.savepoint-dir", str(tmp_path / "savepoints"))
    env = flowmagic.StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    _counting(env)
    job = start(env, Printed(), "configured")
    wait_for(lambda: job.epochs >= 1, job)
    triggered = job.trigger_savepoint()
    stopped = job.stop_with_savepoint(advance_to_end_of_time=False)
    assert job.get_job_status() is JobStatus.FINISHED
    for path in (triggered, stopped):
        assert os.path.dirname(path) == str(tmp_path / "savepoints")
        assert os.path.basename(path).startswith(f"savepoint-{job.get_job_id()[:6]}-")
        assert os.path.exists(os.path.join(path, "_metadata.json"))
    assert triggered != stopped


def test_stop_with_savepoint_that_advances_to_the_end_of_time_fires_event_time_windows(spark, tmp_path) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    watermarks = flowmagic.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda record, _timestamp: record[1]
    )
    # One window of a day: no watermark reaches its end while the job runs.
    (
        env.from_datagen(lambda i: ("k", i), rows_per_second=200)
        .assign_timestamps_and_watermarks(watermarks)
        .key_by(lambda record: record[0])
        .window(flowmagic.TumblingEventTimeWindows.of(flowmagic.Time.days(1)))
        .reduce(lambda a, b: (a[0], max(a[1], b[1])))
        .map(lambda record: record[1] + 1)
        .print()
    )
    printed = Printed()
    job = start(env, printed, "drained")
    wait_for(lambda: job.epochs >= 3, job)
    assert printed.lines == []
    savepoint = job.stop_with_savepoint(True, str(tmp_path / "drained"))
    assert job.get_job_status() is JobStatus.FINISHED and os.path.exists(os.path.join(savepoint, "_metadata.json"))
    # The window fired once, with every record the source read before the savepoint.
    (count,) = _indices(printed)
    source = job.snapshot().vertices[0]
    assert source.name.startswith("Source: Data Generator") and count == source.records_out > 0
