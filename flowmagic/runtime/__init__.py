"""The runtime: executes an ExecutionGraph on a SparkSession with live per-subtask metrics.

``execute`` is what ``env.execute()``, ``execute_and_collect()`` and ``%flow run`` call.
Operators are pure Python (``operators``, ``windowing``, ``sinks``, ``sources``); the
Spark glue lives in ``spark`` alone.
"""

from flowmagic.runtime.job import JobResult, execute

__all__ = ["JobResult", "execute"]
