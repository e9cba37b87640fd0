"""One job on Spark: ship flowmagic, open the metrics channel, run the RDDs under a job group."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.runtime.lifecycle import run_job
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.runtime.metrics_channel import MetricsServer
from flowmagic.runtime.plan import build_plans
from flowmagic.runtime.spark.placement import executor_lookup
from flowmagic.runtime.spark.rdd_graph import build_rdds
from flowmagic.runtime.spark.session import get_spark_session, metrics_bind_host
from flowmagic.runtime.spark.shipping import ship_flowmagic
from flowmagic.runtime.spark.subtask import failure_from
from flowmagic.runtime.spark.warmup import warm_up

__all__ = ["run_on_spark"]


def run_on_spark(
    graph: ExecutionGraph,
    monitor: JobMonitor,
    *,
    spark: Any = None,
    on_progress: Callable[[JobMonitor], None] | None = None,
    cancel_event: threading.Event | None = None,
    metrics: bool = True,
) -> list[tuple[tuple[int, int], Any]]:
    """Run ``graph`` on Spark; return the sinks' results as ``((node id, subtask), payload)``."""
    session = get_spark_session(spark)
    sc = session.sparkContext
    ship_flowmagic(sc)
    plans = build_plans(graph)
    server = MetricsServer(metrics_bind_host(sc), monitor) if metrics else None
    monitor.executor_lookup = executor_lookup(sc)
    group = f"flowmagic-{uuid.uuid4().hex[:12]}"

    def run() -> list[tuple[tuple[int, int], Any]]:
        sc.setJobGroup(group, f"flowmagic: {graph.job_name}", interruptOnCancel=True)
        return [
            (key, payload) for key, payloads in build_rdds(graph, plans, sc, server).collect() for payload in payloads
        ]

    try:
        return run_job(
            monitor,
            run,
            lambda: sc.cancelJobGroup(group),
            executor="Spark",
            failure_of=lambda error: failure_from(error, monitor),
            on_progress=on_progress,
            cancel_event=cancel_event,
            settle=(lambda: monitor.wait_for_reports(quiet=1.0, timeout=10.0)) if server is not None else None,
        )
    finally:
        if server is not None:
            server.close()
        # The session is in use: continuous jobs may come next (a notebook's next cell),
        # and warm up meanwhile, not during this job, whose caller waits for it.
        warm_up(session)
