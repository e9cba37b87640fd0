"""How a continuous job sizes and drives its epochs: admission control, and a query that
starts no Python process for its sources."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from continuous_support import Printed, start, wait_for

import flowmagic
from flowmagic.runtime.continuous.admission import AdmissionControl


def _settle(
    fixed: float, per_record: float, between: float, epochs: int = 60, noise: Callable[[], float] = lambda: 0.0
) -> tuple[int, list[float]]:
    """Run ``epochs`` epochs of a source that always has more input than admitted, each
    taking ``fixed + noise() + per_record * admitted`` s (its subtasks working for its
    records ``per_record * admitted`` s of it) with ``between`` s of Spark's own between
    them: the admission they settle at, and what each took."""
    admission = AdmissionControl(500_000)
    took = []
    for _ in range(epochs):
        admitted = admission.records
        work = per_record * admitted
        duration = fixed + noise() + work
        took.append(duration + between)
        admission.epoch_ran(admitted, duration, True, work)
    return admission.records, took


def test_epochs_grow_on_a_busy_machine_whose_fixed_time_alone_takes_over_a_second() -> None:
    # A loaded machine: 1.2 s per epoch whatever it holds, 2 µs per record. Epochs of 1,000
    # records would make 600 records/s; grown, they make over 100,000.
    records, took = _settle(fixed=1.2, per_record=2e-6, between=0.3)
    assert records >= 128_000
    assert records / (1.2 + 2e-6 * records + 0.3) > 100_000
    # ...while every epoch stays short enough for a stop or a savepoint to be prompt.
    assert max(took) <= AdmissionControl.BUDGET + 0.3


def test_epochs_grow_on_a_machine_so_busy_that_an_epoch_of_1000_records_takes_over_the_budget() -> None:
    # 6 s per epoch whatever it holds (a load average of 30 on 2 cores), 20 µs per record:
    # epochs of 1,000 records would make 160 records/s; a stop waits for the fixed time
    # anyway, so epochs grow while their records take a small part of it.
    records, took = _settle(fixed=6.0, per_record=2e-5, between=0.3)
    assert records >= 64_000
    assert records / (6.0 + 2e-5 * records + 0.3) > 8_000
    assert max(took) <= AdmissionControl.BUSY_BUDGET * 6.0 + 0.3


def test_epochs_grow_on_a_busy_machine_whose_epochs_take_seconds_more_or_less_at_random() -> None:
    # A load average of 20: the fixed time of an epoch is anything from 1.5 s to 4.5 s. Told
    # apart from its records' time, the noise neither stops the epochs' growth nor halves them.
    noise = random.Random(24).uniform
    records, took = _settle(fixed=1.5, per_record=5e-6, between=0.3, epochs=80, noise=lambda: noise(0, 3))
    assert records >= 64_000
    assert sum(took[-20:]) / 20 < 6


def test_a_long_epoch_that_its_records_did_not_make_long_keeps_the_admission() -> None:
    admission = AdmissionControl(500_000)
    for _ in range(6):
        admission.epoch_ran(admission.records, 0.3, True, 0.05)
    grown = admission.records
    admission.epoch_ran(grown, AdmissionControl.LONG + 3, True, 0.05)
    assert admission.records >= grown


def test_epochs_stop_growing_once_growing_brings_no_more_records_per_second() -> None:
    # 10,000 records/s at most, whatever the epochs' size: beyond a few thousand records an
    # epoch gains little but latency.
    records, took = _settle(fixed=0.05, per_record=1e-4, between=0.0)
    assert 4_000 <= records <= 8_000
    assert max(took) < 1


def test_a_slow_pipeline_keeps_short_epochs_after_one_larger_epoch_told_its_time_per_record() -> None:
    # 2 ms a record: 1,000 records take 2.5 s; the one doubled epoch shows it, and then none.
    records, took = _settle(fixed=0.5, per_record=2e-3, between=0.2)
    assert records == AdmissionControl.FIRST
    assert sorted(took)[-2] <= 2.7


def test_an_epoch_whose_records_took_over_the_budget_shrinks_the_admission() -> None:
    admission = AdmissionControl(500_000)
    for _ in range(6):
        admission.epoch_ran(admission.records, 0.2, True, 0.05)
    grown = admission.records
    admission.epoch_ran(grown, AdmissionControl.LONG + 1, True, AdmissionControl.LONG + 0.8)
    assert admission.records <= grown // 2


@pytest.mark.e2e
def test_a_jobs_query_reads_only_sparks_jvm_sources_so_no_python_process_plans_its_batches(spark) -> None:
    # A Python data source starts a Python process when the query starts (seconds on a busy
    # machine) and asks it for offsets and partitions every batch.
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_datagen(lambda i: (i % 3, 1), rows_per_second=200).key_by(lambda p: p[0]).sum(1).print()
    printed = Printed()
    job = start(env, printed, "jvm sources")
    try:
        wait_for(lambda: job.epochs >= 3 and printed.lines, job)
        sources = [source["description"] for source in job.coordinator._query.lastProgress["sources"]]
    finally:
        job.cancel()
    assert sources and not any("Python" in description for description in sources), sources


@pytest.mark.e2e
def test_the_epoch_that_takes_a_savepoint_admits_only_the_first_epochs_records(spark, tmp_path) -> None:
    # A savepoint waits for the running epoch and then for the one that takes it: that one
    # admits little, so that the savepoint answers within about an epoch's fixed time.
    from flowmagic import compile as passes
    from flowmagic.runtime import start_continuous
    from flowmagic.runtime.continuous.state_store import read_manifest
    from flowmagic.runtime.continuous.storage import Storage

    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.from_datagen(lambda i: (i % 10, 1)).key_by(lambda p: p[0]).sum(1).print()
    printed: dict[int, int] = {}
    graph = passes.build(env.get_stream_graph("savepoint admission")).execution_graph
    job = start_continuous(graph, on_output=lambda output: printed.__setitem__(output.epoch, len(output.printed)))
    try:
        # Epochs of many records have run (admission may grow eightfold at once, before any ran).
        wait_for(lambda: max(printed.values(), default=0) >= 4 * AdmissionControl.FIRST, job, timeout=300)
        path = job.trigger_savepoint(str(tmp_path / "savepoint"))
        epoch = read_manifest(Storage(path)).epoch
        wait_for(lambda: epoch in printed, job)
    finally:
        job.cancel()
    assert max(printed.values()) >= 4 * AdmissionControl.FIRST
    assert printed[epoch] <= AdmissionControl.FIRST
