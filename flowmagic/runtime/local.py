"""The in-process reference executor: an ExecutionGraph run in this Python process, no JVM.

Vertices run one after another in topological order, and each vertex's subtasks one after
another, as Spark's stages would run them on one core. Each subtask gets its own copy of
the user's functions, pickled as Spark pickles them (no JVM is started). Exchanges carry the
same pickled buffers as on Spark, and every consumer subtask reads its items sorted by the same
:class:`~flowmagic.runtime.wire.ChannelOrder`, so a job gives the records the Spark
executor gives. It holds every exchange in memory: it is for tests, teaching and small
inputs, not for data that needs a cluster.
"""

from __future__ import annotations

import os
import pickle
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from flowmagic.errors import JobCancelledError, JobError
from flowmagic.graph.execution_graph import ExecutionGraph, ExecutionState
from flowmagic.runtime.failures import unpicklable_records, user_failure
from flowmagic.runtime.lifecycle import run_job
from flowmagic.runtime.metric_reports import SubtaskUpdate
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.runtime.operators.operator import UserFunctionError
from flowmagic.runtime.plan import VertexPlan, build_plans, channel_orders, pickle_plan
from flowmagic.runtime.task import SubtaskStats, run_subtask
from flowmagic.runtime.wire import RESULT_SLOT, RESULTS_SLOT, pickle_records

__all__ = ["run_locally"]

# Live counters are pushed to the monitor at most this often (as executors report them).
_REPORT_INTERVAL = 0.2


class _LocalJob:
    def __init__(self, graph: ExecutionGraph, monitor: JobMonitor):
        self.graph = graph
        self.monitor = monitor
        self.plans = build_plans(graph)
        for plan in self.plans.values():
            if plan.remote_text_path is not None:
                raise JobError(
                    f"{plan.name!r} reads {plan.remote_text_path!r}: the local executor reads local files only; "
                    "run it on Spark (executor='spark'), whose Hadoop file systems read it."
                )
        self.orders = channel_orders(graph, self.plans)
        # Per consumer vertex and subtask: (channel order, pickled (key, payload)) frames.
        self.inboxes: dict[str, list[list[tuple[int, bytes]]]] = {
            vertex.id: [[] for _ in range(vertex.parallelism)] for vertex in graph.vertices.values()
        }
        self.cancelled = threading.Event()
        self.host = f"{socket.gethostname()}:{os.getpid()}"

    def run(self) -> list[tuple[tuple[int, int], Any]]:
        # As Spark does, every subtask gets its own copy of the plan and the user's functions
        # in it (a function object's fields are per subtask), pickled the way Spark pickles them.
        from pyspark import cloudpickle

        results: list[tuple[tuple[int, int], Any]] = []
        for vertex in self.graph.vertices.values():
            shipped = pickle_plan(self.plans[vertex.id], cloudpickle.dumps)
            for index in range(vertex.parallelism):
                results.extend(self._run_subtask(pickle.loads(shipped), index))
        return results

    def cancel(self) -> None:
        self.cancelled.set()

    def _run_subtask(self, plan: VertexPlan, index: int) -> list[tuple[tuple[int, int], Any]]:
        frames = self.inboxes[plan.id][index]
        frames.sort(key=_order_of)
        self.inboxes[plan.id][index] = []
        stats = SubtaskStats()
        report = self._reporter(plan.id, index, stats)
        results: list[tuple[tuple[int, int], Any]] = []
        routes = {edge.slot: (self.inboxes[edge.consumer], self.orders[edge.consumer]) for edge in plan.out_edges}
        last_report = 0.0
        try:
            for slot, key, payload in run_subtask(plan, index, 0, _unpickled(frames), stats):
                if self.cancelled.is_set():
                    raise JobCancelledError("cancelled")
                if slot == RESULT_SLOT:
                    results.append((key, payload))
                elif slot == RESULTS_SLOT:
                    results.extend((key, result) for result in payload)
                else:
                    inboxes, order = routes[slot]
                    try:
                        frame = pickle_records((key, payload))
                    except Exception as error:
                        raise UserFunctionError(self._unpicklable(error, plan, slot, index, payload)) from error
                    inboxes[key[0]].append((order(key), frame))
                now = time.monotonic()
                if now - last_report >= _REPORT_INTERVAL:
                    report()
                    last_report = now
        except (UserFunctionError, SystemExit, KeyboardInterrupt) as error:
            # In this worker thread, a KeyboardInterrupt comes from user code, not a signal.
            details = user_failure(error, plan.name, index, plan.parallelism, 0)
            report(ExecutionState.FAILED, details)
            raise UserFunctionError(details) from error
        except BaseException:
            report(ExecutionState.CANCELED if self.cancelled.is_set() else ExecutionState.FAILED)
            raise
        report(ExecutionState.FINISHED)
        return results

    @staticmethod
    def _unpicklable(error: Exception, plan: VertexPlan, slot: int, index: int, payload: Any) -> dict[str, Any]:
        producer = plan.nodes[plan.out_edges[slot].source_node]
        subtask = f"{plan.name} ({index + 1}/{plan.parallelism})"
        return unpicklable_records(error, payload, producer.name, producer.call_site, subtask, 0, pickle_records)

    def _reporter(self, vertex_id: str, index: int, stats: SubtaskStats) -> Callable[..., None]:
        def report(state: str | None = None, failure: dict[str, Any] | None = None) -> None:
            if state is not None:
                stats.state = state
            self.monitor.update(
                SubtaskUpdate(
                    vertex_id,
                    index,
                    host=self.host,
                    state=stats.state,
                    records_in=stats.records_in,
                    records_out=stats.records_out,
                    watermark=stats.watermark,
                    start=stats.started,
                    metrics=stats.user_metrics(),
                    channels=stats.count_channels(),
                    event_time=stats.event_time(),
                    end=time.time() if state is not None else None,
                    failure=failure,
                )
            )

        return report


def _order_of(frame: tuple[int, bytes]) -> int:
    return frame[0]


def _unpickled(frames: list[tuple[int, bytes]]) -> Iterator[Any]:
    for _order, frame in frames:
        yield pickle.loads(frame)


def run_locally(
    graph: ExecutionGraph,
    monitor: JobMonitor,
    *,
    on_progress: Callable[[JobMonitor], None] | None = None,
    cancel_event: threading.Event | None = None,
) -> list[tuple[tuple[int, int], Any]]:
    """Run ``graph`` in this process; return the sinks' results as ``((node id, subtask), payload)``."""
    job = _LocalJob(graph, monitor)
    return run_job(
        monitor,
        job.run,
        job.cancel,
        executor="the local executor",
        failure_of=lambda error: error.details if isinstance(error, UserFunctionError) else None,
        on_progress=on_progress,
        cancel_event=cancel_event,
    )
