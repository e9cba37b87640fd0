"""The runtime: runs an ExecutionGraph on Spark or in this process, with live per-subtask metrics.

``execute`` runs a bounded job and ``start_continuous`` an unbounded one (in the continuous
mode, ``continuous/``); :mod:`flowmagic.executors` chooses between them for every way of running.
Operators are pure Python (``operators/``, on the base in ``operators/operator``), sources
and sinks are connectors (``connectors/``), keyed state and timers are ``state/``, each
implementation registered for its kinds in ``registry``; a subtask runs its chain in
``task``; the exchange's format is ``wire``. Executors: ``spark`` (the only package importing
pyspark) and ``local``, both driven by ``lifecycle``.
"""

from flowmagic.runtime.continuous.output import CollectedRecords
from flowmagic.runtime.job import (
    EXECUTORS,
    BoundedJob,
    echo_output,
    execute,
    start_continuous,
    trust_savepoint,
)
from flowmagic.runtime.result import JobResult

__all__ = [
    "EXECUTORS",
    "BoundedJob",
    "CollectedRecords",
    "JobResult",
    "echo_output",
    "execute",
    "start_continuous",
    "trust_savepoint",
]
