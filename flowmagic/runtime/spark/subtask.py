"""The function Spark runs for each partition of a vertex: one subtask, reporting live metrics."""

from __future__ import annotations

import json
import pickle
import re
from collections.abc import Iterator
from typing import Any

from flowmagic.graph.execution_graph import ExecutionState
from flowmagic.runtime.failures import user_failure
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.runtime.metrics_channel import Reporter
from flowmagic.runtime.operators.operator import UserFunctionError
from flowmagic.runtime.plan import VertexPlan, pickle_plan
from flowmagic.runtime.task import SubtaskStats, run_subtask

__all__ = ["SubtaskFunction", "failure_from", "failure_marker"]

# A failed subtask's details cross Spark as the text of the exception the task raises.
_FAILURE_MARK = "FLOWMAGIC-FAILURE "


class SubtaskFunction:
    """Runs subtask ``index`` of ``plan`` over the partition Spark gives it."""

    def __init__(self, plan: VertexPlan, address: tuple[str, int] | None, secret: str):
        self.plan = plan
        self.address = address
        self.secret = secret

    def __getstate__(self) -> dict[str, Any]:
        # The plan is pickled here, so that a user function that cannot be pickled is named
        # (by a NotSerializableError, which Spark's serializer lets through unprinted).
        from pyspark import cloudpickle

        return {**vars(self), "plan": pickle_plan(self.plan, cloudpickle.dumps)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state, plan=pickle.loads(state["plan"]))

    def __call__(self, index: int, items: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        context = TaskContext.get()
        attempt = context.attemptNumber() if context is not None else 0
        stats = SubtaskStats()
        spark_task = (context.stageId(), context.taskAttemptId()) if context is not None else None
        reporter = Reporter(self.address, self.secret, self.plan.id, index, attempt, stats, spark_task)
        try:
            yield from run_subtask(self.plan, index, attempt, items, stats)
        except GeneratorExit:
            reporter.finish(ExecutionState.CANCELED)
            raise
        except (UserFunctionError, SystemExit, KeyboardInterrupt) as error:
            details = user_failure(error, self.plan.name, index, self.plan.parallelism, attempt)
            reporter.finish(ExecutionState.FAILED, details)
            raise RuntimeError(failure_marker(details)) from None
        except BaseException:
            reporter.finish(ExecutionState.FAILED)
            raise
        reporter.finish(ExecutionState.FINISHED)


def failure_marker(details: dict[str, Any]) -> str:
    """The text of the exception a failed task raises, carrying its details to the driver."""
    return _FAILURE_MARK + json.dumps(details)


def failure_from(error: BaseException, monitor: JobMonitor) -> dict[str, Any] | None:
    """The failed subtask's details, from the error Spark raised (or the last metrics report)."""
    match = re.search(re.escape(_FAILURE_MARK) + r"(\{.*?\})\s*$", str(error), re.MULTILINE)
    if match:
        try:
            return json.loads(match.group(1))
        except ValueError:
            pass
    return monitor.failures[-1] if monitor.failures else None
