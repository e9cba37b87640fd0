"""Warming a SparkContext for the continuous mode while nothing else runs on it.

A continuous job's epochs are the micro-batches of a Structured Streaming query. A process's
first streaming query spends seconds in the JVM before its first batch (about 9 s on a
2-core machine at load 5, 3 s quiet): it loads some 4,000 classes of Spark SQL's analyzer,
optimizer, streaming execution and Janino code generator that RDD jobs never touch, starts
py4j's callback server for ``foreachBatch``, and the job's subtasks check that the workers
import ``pyarrow``. So once the first bounded job on a SparkContext ended, and no Spark job
ran for a second (a notebook between cells), a background thread does all of that, with a
throwaway query of the shape the continuous mode's clock has (Spark's ``rate-micro-batch``
source into ``foreachBatch``) run for one batch: a continuous job started later (a
notebook's next cell) finds the work done, and one started meanwhile shares what is
already loaded.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from typing import Any

from flowmagic.runtime.spark.shipping import ship_flowmagic

__all__ = ["IDLE_BEFORE", "IDLE_WAIT_AT_MOST", "WARM_UP_TIMEOUT", "warm_up", "warmed"]

#: Seconds the throwaway query may take to run its batch before it is stopped anyway.
WARM_UP_TIMEOUT = 300.0
#: How long no Spark job may have run before the warm-up begins (s), and how long it waits
#: for such a pause at most.
IDLE_BEFORE = 1.0
IDLE_WAIT_AT_MOST = 120.0

# applicationId -> the thread warming that SparkContext (ended once it is warm).
_WARMING: dict[str, threading.Thread] = {}
_LOCK = threading.Lock()


def warm_up(session: Any) -> None:
    """Warm ``session``'s SparkContext for continuous jobs in a background thread, once per
    SparkContext (later calls return at once)."""
    application = session.sparkContext.applicationId
    with _LOCK:
        if application in _WARMING:
            return
        thread = _WARMING[application] = threading.Thread(
            target=_warm, args=(session,), name="flowmagic-warm-up", daemon=True
        )
    thread.start()


def warmed(session: Any, timeout: float | None = None) -> bool:
    """Wait (at most ``timeout`` s) until the warm-up of ``session``'s SparkContext ended;
    whether it has (False: none was started, or it still runs)."""
    with _LOCK:
        thread = _WARMING.get(session.sparkContext.applicationId)
    if thread is None:
        return False
    thread.join(timeout)
    return not thread.is_alive()


def _warm(session: Any) -> None:
    # Only ever a head start: whatever fails here (a stopped session, workers without
    # pyarrow) the continuous job meets again itself, and reports.
    with contextlib.suppress(Exception):
        _wait_for_a_pause(session.sparkContext)
    from pyspark import SparkFiles

    # In the SparkContext's own files directory, which Spark deletes when it stops: a
    # session stopped while the query runs leaves nothing behind.
    directory = os.path.join(SparkFiles.getRootDirectory(), "flowmagic-warm-up")
    try:
        with contextlib.suppress(Exception):
            _one_batch(session, directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    # After the batch: the probe is a Spark job, which a job started meanwhile should not
    # wait behind.
    with contextlib.suppress(Exception):
        ship_flowmagic(session.sparkContext, arrow=True)


def _wait_for_a_pause(sc: Any) -> None:
    """Return once no Spark job ran for ``IDLE_BEFORE`` s (a notebook between cells), or
    after ``IDLE_WAIT_AT_MOST`` s: on a machine of few cores the warm-up would slow the jobs
    of a program that runs one after another."""
    tracker = sc.statusTracker()
    deadline = time.monotonic() + IDLE_WAIT_AT_MOST
    idle_since = time.monotonic()
    while time.monotonic() < deadline:
        now = time.monotonic()
        if tracker.getActiveJobIds():
            idle_since = now
        elif now - idle_since >= IDLE_BEFORE:
            return
        time.sleep(0.2)


def _one_batch(session: Any, checkpoint: str) -> None:
    from pyspark.sql import functions

    def batch(frame: Any, batch_id: int) -> None:
        pass

    frame = session.readStream.format("rate-micro-batch").option("rowsPerBatch", 1).option("numPartitions", 1).load()
    query = (
        frame.select(functions.lit(-1).alias("fm_source"))
        .writeStream.foreachBatch(batch)
        .option("checkpointLocation", checkpoint)
        .queryName("flowmagic-warm-up")
        .start()
    )
    try:
        # Stopped once its first batch completed (its progress is reported then), not
        # while it runs, which would cut the batch short.
        deadline = time.monotonic() + WARM_UP_TIMEOUT
        while query.lastProgress is None and query.isActive and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        query.stop()
