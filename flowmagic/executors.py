"""One way to run a job, as Flink's ``PipelineExecutor``: executors by name behind
:func:`submit`, which always returns a job client.

``env.execute()``, ``execute_async()``, ``execute_and_collect()``, ``Pipeline.run()`` and
``%flow run`` all submit here. Whether a job is bounded is decided once, from its graph
(:func:`is_unbounded`): an unbounded job runs on the ``continuous`` executor (epochs on
Spark); a bounded one on the executor the program names, ``spark`` or ``local`` (this
Python process). Either way the caller gets a :class:`JobClient` (status, cancel,
savepoints, result), and :func:`wait_for` follows one to its end as an attached run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from flowmagic import compile as passes
from flowmagic.errors import JobCancelledError, ProgramError, UnsupportedSourceError
from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.graph.stream_graph import StreamGraph
from flowmagic.runtime import BoundedJob, CollectedRecords, JobResult, echo_output, start_continuous
from flowmagic.runtime.continuous.job import ContinuousJob, JobStatus
from flowmagic.runtime.continuous.output import EpochOutput
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.vocabulary.pipeline_config import ContinuousOptions

__all__ = [
    "EXECUTORS",
    "CollectedIterator",
    "JobClient",
    "PipelineExecutor",
    "collect",
    "execute",
    "executor",
    "is_unbounded",
    "submit",
    "wait_for",
]


class JobClient(Protocol):
    """Flink's ``JobClient``: what the caller of a submitted job holds, bounded or not."""

    @property
    def monitor(self) -> JobMonitor:
        """The job's live metrics."""
        ...

    def get_job_id(self) -> str: ...

    def get_job_status(self) -> JobStatus: ...

    def cancel(self, timeout: float = ...) -> None: ...

    def trigger_savepoint(self, savepoint_directory: Any = None, timeout: float | None = ...) -> str: ...

    def stop_with_savepoint(self, *args: Any, **kwargs: Any) -> str: ...

    def wait(self, timeout: float | None = None) -> JobStatus: ...

    def result(self) -> JobResult: ...


class PipelineExecutor(Protocol):
    """Flink's ``PipelineExecutor``: starts an ExecutionGraph and returns its client at once."""

    name: str

    def execute(self, graph: ExecutionGraph, request: Submission) -> JobClient: ...


class Submission:
    """What the caller asks of one run besides the graph (Flink's executor ``Configuration``)."""

    __slots__ = ("cancel_event", "continuous", "metrics", "monitor", "on_output", "spark")

    def __init__(
        self,
        *,
        spark: Any = None,
        continuous: ContinuousOptions | None = None,
        on_output: Callable[[EpochOutput], None] | None = None,
        cancel_event: threading.Event | None = None,
        monitor: JobMonitor | None = None,
        metrics: bool = True,
    ):
        self.spark = spark
        self.continuous = continuous if continuous is not None else ContinuousOptions()
        self.on_output = on_output
        self.cancel_event = cancel_event
        self.monitor = monitor
        self.metrics = metrics


class _BoundedExecutor:
    """A bounded job on Spark or in this process, run by the driver thread of its client."""

    def __init__(self, name: str):
        self.name = name

    def execute(self, graph: ExecutionGraph, request: Submission) -> JobClient:
        return BoundedJob(
            graph,
            executor=self.name,
            spark=request.spark,
            cancel_event=request.cancel_event,
            monitor=request.monitor,
            metrics=request.metrics,
        ).start()


class _ContinuousExecutor:
    """An unbounded job in the continuous mode: epochs of Spark Structured Streaming."""

    name = "continuous"

    def execute(self, graph: ExecutionGraph, request: Submission) -> JobClient:
        return start_continuous(
            graph,
            spark=request.spark,
            options=request.continuous,
            on_output=request.on_output,
            monitor=request.monitor,
        )


_REGISTRY: dict[str, PipelineExecutor] = {
    executor.name: executor
    for executor in (_BoundedExecutor("spark"), _BoundedExecutor("local"), _ContinuousExecutor())
}

#: The executors a program names (``executor=``, ``%flow run --executor``); an unbounded job
#: runs on the continuous one whatever it names.
EXECUTORS = ("spark", "local")


def executor(name: str) -> PipelineExecutor:
    """The registered executor ``name``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ProgramError(f"Unknown executor {name!r}: use one of {', '.join(EXECUTORS)}.") from None


def is_unbounded(graph: ExecutionGraph | StreamGraph) -> bool:
    """Whether a source of ``graph`` is unbounded: the job then runs in the continuous mode."""
    stream_graph = graph.job_graph.stream_graph if isinstance(graph, ExecutionGraph) else graph
    return any(node.source_kind is not None and not node.bounded for node in stream_graph.nodes.values())


def submit(
    graph: ExecutionGraph | StreamGraph,
    *,
    executor: str = "spark",
    spark: Any = None,
    continuous: ContinuousOptions | None = None,
    on_output: Callable[[EpochOutput], None] | None = None,
    echo: bool = False,
    cancel_event: threading.Event | None = None,
    monitor: JobMonitor | None = None,
    metrics: bool = True,
) -> JobClient:
    """Start ``graph`` (a StreamGraph is compiled first) and return its client at once.

    A bounded job runs on ``executor``; an unbounded one on the continuous executor, with
    ``continuous`` options, handing each epoch's output to ``on_output`` (with ``echo``, its
    print sinks' lines are printed as they come). ``cancel_event`` cancels a bounded job when set."""
    if executor not in EXECUTORS:
        raise ProgramError(f"Unknown executor {executor!r}: use one of {', '.join(EXECUTORS)}.")
    if isinstance(graph, StreamGraph):
        graph = passes.build(graph).execution_graph
    target = executor
    if is_unbounded(graph):
        if executor != "spark":
            raise UnsupportedSourceError(
                f"Job {graph.job_name!r} reads an unbounded source: it runs in the continuous mode, on Spark only."
            )
        target = "continuous"
    request = Submission(
        spark=spark,
        continuous=continuous,
        on_output=echo_output if echo and on_output is None else on_output,
        cancel_event=cancel_event,
        monitor=monitor,
        metrics=metrics,
    )
    return _REGISTRY[target].execute(graph, request)


def wait_for(
    client: JobClient,
    *,
    on_progress: Callable[[JobMonitor], None] | None = None,
    cancel_event: threading.Event | None = None,
) -> JobResult:
    """Follow ``client``'s job to its end (an attached run) and return its result.

    ``on_progress(monitor)`` is called about twice a second and once at the end. Every way
    out other than the job's end cancels it: an interrupt or ``cancel_event`` (then
    :class:`JobCancelledError`), an error of ``on_progress``."""
    try:
        while not client.get_job_status().is_globally_terminal:
            if cancel_event is not None and cancel_event.is_set():
                raise KeyboardInterrupt
            client.wait(0.4)
            if on_progress is not None:
                on_progress(client.monitor)
        return client.result()
    except BaseException as error:
        client.cancel()
        if isinstance(error, KeyboardInterrupt):
            raise JobCancelledError(f"Job {client.monitor.job_name!r} was cancelled.") from None
        raise
    finally:
        if on_progress is not None:
            on_progress(client.monitor)


def execute(
    graph: ExecutionGraph | StreamGraph,
    *,
    executor: str = "spark",
    spark: Any = None,
    continuous: ContinuousOptions | None = None,
    on_progress: Callable[[JobMonitor], None] | None = None,
    cancel_event: threading.Event | None = None,
    echo: bool = True,
) -> JobResult:
    """Submit ``graph`` and wait for it (Flink's ``execute()``). Print sinks' lines go to this
    process's stdout/stderr when ``echo`` is true: a bounded job's once it finished, an
    unbounded one's as it goes (it runs until cancelled)."""
    client = submit(
        graph,
        executor=executor,
        spark=spark,
        continuous=continuous,
        echo=echo,
        cancel_event=cancel_event,
    )
    result = wait_for(client, on_progress=on_progress, cancel_event=cancel_event)
    if echo:
        # A bounded job's printed lines wait in its result; a continuous job's came as it ran.
        result.echo()
    return result


class CollectedIterator(Iterator[Any]):
    """The records of a bounded ``execute_and_collect()``: an iterator that is also a context
    manager, as PyFlink's ``CloseableIterator`` (``with ds.execute_and_collect() as results:``).
    The job has finished when it is returned, so closing only drops the records left."""

    def __init__(self, records: list[Any]):
        self._records = iter(records)

    def __next__(self) -> Any:
        return next(self._records)

    def close(self) -> None:
        self._records = iter(())

    def __enter__(self) -> CollectedIterator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def collect(
    graph: StreamGraph,
    sink_id: int,
    *,
    executor: str = "spark",
    continuous: ContinuousOptions | None = None,
    limit: int | None = None,
) -> Iterator[Any]:
    """``execute_and_collect()``: the records of collect sink ``sink_id`` of ``graph`` (the
    first ``limit``). A bounded job's once it finished; an unbounded one's as they arrive,
    its job cancelled when the iterator is closed (or after the last of ``limit``)."""
    records_as_they_come = CollectedRecords(sink_id)
    client = submit(graph, executor=executor, continuous=continuous, on_output=records_as_they_come.take)
    if isinstance(client, ContinuousJob):
        records_as_they_come.attach(client)
        return records_as_they_come if limit is None else records_as_they_come.limited(limit)
    records = wait_for(client).collected(sink_id)
    return CollectedIterator(records if limit is None else records[:limit])
