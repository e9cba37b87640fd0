"""Subtasks' epoch reports (state files, counters), carried to the driver by Spark's
accumulator updates.

A Spark task's accumulator updates reach the driver with the task's completion, before its
stage (and so its job) counts as complete, and only from a task that succeeded. So a vertex
that hands its records on through an exchange needs no result partition of its own for its
report: its output goes straight into the exchange, pickled once, where a result partition
would have kept it (persisted) for a second pass and a task more.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EpochReports", "ReportKey", "epoch_reports", "take_reports"]

#: (epoch, vertex id, subtask index).
ReportKey = tuple[int, str, int]


class EpochReports:
    """The accumulator's parameter: reports by (epoch, vertex id, subtask); a later report of
    the same subtask and epoch (a task run again) replaces an earlier one."""

    def zero(self, value: dict[ReportKey, dict[str, Any]]) -> dict[ReportKey, dict[str, Any]]:
        return {}

    def addInPlace(
        self, value1: dict[ReportKey, dict[str, Any]], value2: dict[ReportKey, dict[str, Any]]
    ) -> dict[ReportKey, dict[str, Any]]:
        value1.update(value2)
        return value1


def epoch_reports(spark_context: Any) -> Any:
    """A new accumulator of epoch reports, for one continuous job's epochs."""
    return spark_context.accumulator({}, EpochReports())


def take_reports(accumulator: Any, epoch: int) -> dict[tuple[str, int], dict[str, Any]]:
    """Epoch ``epoch``'s reports by (vertex id, subtask), taken out of ``accumulator``, which
    is emptied: what else it holds came from the tasks of failed attempts of earlier epochs
    (which a later epoch replaced)."""
    reports = accumulator.value
    accumulator.value = {}
    return {(vertex, index): report for (number, vertex, index), report in reports.items() if number == epoch}
