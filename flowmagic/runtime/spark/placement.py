"""Which Spark executor ran a task: asked of Spark's status store on the driver.

A Python worker does not know its executor's id (the JVM does), so subtasks report their
Spark task id and the driver looks it up, once per task, where Spark's own UI does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["executor_lookup"]

#: Stage attempts looked through: a stage is retried only after a fetch failure.
_STAGE_ATTEMPTS = 4


def executor_lookup(spark_context: Any) -> Callable[[int, set[int]], dict[int, str]]:
    """A function from a stage and task ids to the ids of the executors that ran them (as far
    as Spark's status store knows them yet)."""

    def lookup(stage: int, tasks: set[int]) -> dict[int, str]:
        store = spark_context._jsc.sc().statusStore()
        found: dict[int, str] = {}
        for stage_attempt in range(_STAGE_ATTEMPTS):
            try:
                listed = store.taskList(stage, stage_attempt, 1 << 30)
            except Exception:
                # No such stage attempt: the earlier ones were all there is.
                break
            iterator = listed.iterator()
            while iterator.hasNext():
                data = iterator.next()
                task = int(data.taskId())
                if task in tasks:
                    found[task] = str(data.executorId())
            if len(found) == len(tasks):
                break
        return found

    return lookup
