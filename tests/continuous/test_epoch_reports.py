"""Epoch reports ride Spark's accumulator updates: on a real local Spark (``local[2,4]``),
only a succeeded task's report arrives, and it has arrived when the job returns."""

from __future__ import annotations

import pytest

from flowmagic.runtime.continuous.epoch_reports import epoch_reports, take_reports

pytestmark = pytest.mark.e2e


class _Producer:
    """A shuffle's producer (its tasks run in a stage before the result stage) whose subtask 1
    fails in its first attempt after it reported."""

    def __init__(self, reports, epoch: int):
        self.reports, self.epoch = reports, epoch

    def __call__(self, index, items):
        from pyspark import TaskContext

        attempt = TaskContext.get().attemptNumber()
        records = list(items)
        self.reports.add({(self.epoch, "producer", index): {"attempt": attempt, "records": len(records)}})
        if index == 1 and attempt == 0:
            raise RuntimeError("the first attempt fails after it reported")
        yield from ((record % 2, record) for record in records)


def test_a_retried_tasks_report_replaces_nothing_and_arrives_before_the_job_returns(spark) -> None:
    sc = spark.sparkContext
    reports = epoch_reports(sc)
    take_reports(reports, 0)
    shuffled = sc.parallelize(range(10), 2).mapPartitionsWithIndex(_Producer(reports, 7)).partitionBy(2)
    assert sorted(shuffled.values().collect()) == list(range(10))
    taken = take_reports(reports, 7)
    assert taken == {("producer", 0): {"attempt": 0, "records": 5}, ("producer", 1): {"attempt": 1, "records": 5}}
    assert take_reports(reports, 7) == {}


def test_reports_of_earlier_epochs_are_dropped_when_an_epochs_reports_are_taken(spark) -> None:
    sc = spark.sparkContext
    reports = epoch_reports(sc)
    for epoch in (3, 4):
        sc.parallelize(range(4), 2).mapPartitionsWithIndex(_Producer(reports, epoch)).count()
    assert set(take_reports(reports, 4)) == {("producer", 0), ("producer", 1)}
    assert reports.value == {}
