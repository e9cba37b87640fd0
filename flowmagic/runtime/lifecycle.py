"""A job's life on the driver, whatever executes it: start, progress, cancel, fail or finish.

An executor hands :func:`run_job` a blocking ``run()`` (which returns the sinks' results)
and a ``cancel()`` that makes ``run()`` stop. ``run()`` goes to a worker thread; this
thread reports progress, and turns every way out other than success into a cancelled job:
a kernel interrupt, ``cancel_event``, or an error while showing progress, so that no job
keeps running after its caller is gone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from flowmagic.errors import JobCancelledError, JobFailedError, NotSerializableError
from flowmagic.graph.execution_graph import ExecutionState
from flowmagic.runtime.failures import failure_message
from flowmagic.runtime.metrics import JobMonitor

__all__ = ["run_job"]

#: How long a cancelled job may take to stop before the driver stops waiting for it.
_CANCEL_GRACE = 30.0


def run_job(
    monitor: JobMonitor,
    run: Callable[[], Any],
    cancel: Callable[[], None],
    *,
    executor: str,
    failure_of: Callable[[BaseException], dict[str, Any] | None],
    on_progress: Callable[[JobMonitor], None] | None = None,
    cancel_event: threading.Event | None = None,
    progress_interval: float = 0.4,
    settle: Callable[[], None] | None = None,
) -> Any:
    """Run ``run()`` as job ``monitor.job_name`` and return what it returned.

    ``failure_of(error)`` extracts a task's failure details from what ``run()`` raised;
    ``settle()`` runs after success, before the job counts as finished (e.g. to wait for
    the last metrics reports).
    """
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["results"] = run()
        except BaseException as error:
            outcome["error"] = error

    try:
        monitor.state = ExecutionState.RUNNING
        monitor.start_time = time.time()
        monitor.mark(ExecutionState.SCHEDULED)
        worker = threading.Thread(target=work, name=f"flowmagic-job-{monitor.job_name}", daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(progress_interval)
                if cancel_event is not None and cancel_event.is_set():
                    raise KeyboardInterrupt
                if on_progress is not None:
                    on_progress(monitor)
        except BaseException as error:
            monitor.state = ExecutionState.CANCELING
            cancel()
            worker.join(_CANCEL_GRACE)
            monitor.mark(ExecutionState.CANCELED)
            monitor.state = ExecutionState.CANCELED
            if isinstance(error, KeyboardInterrupt):
                raise JobCancelledError(f"Job {monitor.job_name!r} was cancelled.") from None
            raise
        if "error" in outcome:
            raised = outcome["error"]
            monitor.mark(ExecutionState.CANCELED)
            monitor.state = ExecutionState.FAILED
            if isinstance(raised, NotSerializableError):
                # Found while shipping the tasks: the program is at fault, and its message says
                # where; the executor's frames would only hide it.
                raise raised.with_traceback(None) from None
            failure = failure_of(raised)
            raise JobFailedError(failure_message(failure, raised, executor), failure) from None
        if settle is not None:
            settle()
        monitor.mark(ExecutionState.FINISHED)
        monitor.state = ExecutionState.FINISHED
        return outcome["results"]
    finally:
        monitor.end_time = time.time()
        if on_progress is not None:
            on_progress(monitor)
