"""A named pipeline: a program's environment with its four graphs, to show, explain and run.

``%%flow NAME`` makes one, but it needs no IPython: ``Pipeline("wordcount", env)`` works in
any Python session.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Protocol

from flowmagic import compile as passes
from flowmagic.api.environment import StreamExecutionEnvironment
from flowmagic.errors import JobCancelledError, JobError, ProgramError
from flowmagic.executors import JobClient, is_unbounded, submit, wait_for
from flowmagic.graph import ExecutionGraph, JobGraph, PhysicalGraph, StreamGraph
from flowmagic.render import explain
from flowmagic.runtime import JobResult
from flowmagic.runtime.continuous.job import ContinuousJob
from flowmagic.runtime.continuous.output import EpochOutput
from flowmagic.runtime.continuous.restore_check import RestoreCheck, check_restore
from flowmagic.widgets.graph_view import LEVELS, FlowGraphs
from flowmagic.widgets.job_view import JobView

__all__ = ["Pipeline", "PlanText", "RunOutput"]


class RunOutput(Protocol):
    """What a pipeline shows of a run's output besides the job view (a SQL query's result):
    it is displayed before the job starts, given each epoch's output of an unbounded job,
    the result of a bounded one, and told how the run ended."""

    def display(self) -> None: ...

    def epoch(self, output: EpochOutput) -> None: ...

    def result(self, result: JobResult) -> None: ...

    def ended(self, state: str) -> None: ...


class PlanText(str):
    """Text a notebook shows as it is, not as a quoted string (``Pipeline.explain()``)."""

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


class Pipeline:
    """A pipeline: its environment and its four graphs.

    The graphs are built once, when the pipeline is made, with ``name`` as the job name. The
    physical graph places the job on ``taskmanagers`` TaskManagers of ``slots_per_taskmanager``
    slots (Flink's ``taskmanager.numberOfTaskSlots``); by default on the cluster a local
    environment starts: one TaskManager with a slot per subtask of the widest vertex.
    """

    def __init__(
        self,
        name: str,
        env: StreamExecutionEnvironment,
        *,
        taskmanagers: int | None = None,
        slots_per_taskmanager: int | None = None,
    ):
        self.name = name
        self.env = env
        compiled = passes.build(env.get_stream_graph(name))
        self.stream_graph = compiled.stream_graph
        self.job_graph = compiled.job_graph
        self.execution_graph = compiled.execution_graph
        #: The cluster options the pipeline was made with (None: a local environment's default).
        self.cluster = (taskmanagers, slots_per_taskmanager)
        self.physical_graph = passes.deploy(self.execution_graph, taskmanagers, slots_per_taskmanager)
        #: The clients of its runs now under way.
        self._runs: list[JobClient] = []
        self._lock = threading.Lock()
        #: How its last run ended (Flink's job status, and a stop's savepoint), for ``%flow list``.
        self._last_end: str | None = None

    def __repr__(self) -> str:
        return (
            f"<Pipeline {self.name!r}: {self.stream_graph.job_type}, {len(self.stream_graph.nodes)} operators, "
            f"{len(self.job_graph.vertices)} job vertices, {self.execution_graph.num_subtasks} subtasks>"
        )

    def show(self, level: str = "all", *, physical_graph: PhysicalGraph | None = None) -> FlowGraphs:
        """The graph widget: ``"all"`` four levels in tabs, or one of ``stream``, ``job``,
        ``execution``, ``physical``; ``physical_graph`` draws another cluster's (see :meth:`deploy`)."""
        levels = tuple(LEVELS) if level == "all" else (level,)
        return FlowGraphs(
            self.name,
            self.stream_graph,
            self.job_graph,
            self.execution_graph,
            physical_graph=physical_graph or self.physical_graph,
            levels=levels,
        )

    def deploy(self, taskmanagers: int | None = None, slots_per_taskmanager: int | None = None) -> PhysicalGraph:
        """The physical graph on another cluster: ``taskmanagers`` TaskManagers of
        ``slots_per_taskmanager`` slots; what is not given is the pipeline's own option."""
        return passes.deploy(
            self.execution_graph,
            self.cluster[0] if taskmanagers is None else taskmanagers,
            self.cluster[1] if slots_per_taskmanager is None else slots_per_taskmanager,
        )

    def explain(self) -> PlanText:
        """The three graphs as text, in the spirit of Flink's ``EXPLAIN``."""
        return PlanText(explain(self.stream_graph, self.job_graph, self.execution_graph))

    def graph(self, level: str) -> StreamGraph | JobGraph | ExecutionGraph | PhysicalGraph:
        """The StreamGraph, JobGraph, ExecutionGraph or physical graph, by level name."""
        graphs: dict[str, StreamGraph | JobGraph | ExecutionGraph | PhysicalGraph] = {
            "stream": self.stream_graph,
            "job": self.job_graph,
            "execution": self.execution_graph,
            "physical": self.physical_graph,
        }
        return graphs[level]

    def compiled(self, parallelism: int | None = None, mode: str | None = None) -> tuple[JobGraph, ExecutionGraph]:
        """Its JobGraph and ExecutionGraph, built again at ``parallelism`` (operators without
        their own) or in ``mode`` when given, as ``flink run -p`` would."""
        if parallelism is None and mode is None:
            return self.job_graph, self.execution_graph
        compiled = passes.build(self.env.get_stream_graph(self.name, parallelism=parallelism, runtime_mode=mode))
        return compiled.job_graph, compiled.execution_graph

    def check_restore(
        self,
        savepoint_path: str,
        *,
        allow_non_restored_state: bool = False,
        parallelism: int | None = None,
        spark: Any = None,
    ) -> RestoreCheck:
        """What restoring the savepoint (or retained checkpoint ``chk-<n>``) at
        ``savepoint_path`` into this pipeline would do, operator by operator, without running
        it: restored, new (starts empty), missing (refused unless ``allow_non_restored_state``,
        Flink's ``--allowNonRestoredState``), incompatible (refused, with the restore's
        texts). ``parallelism`` checks a restore at another parallelism (``%flow run -p``).

        The savepoint is verified as a restore verifies it (a damaged or unsigned one raises
        :class:`~flowmagic.errors.StateIntegrityError`); its state is not unpickled. The
        keyed operators' functions are opened once here, on copies, to learn the states they
        declare. ``%flow check NAME --savepoint DIR`` draws the result on the JobGraph."""
        _job_graph, execution_graph = self.compiled(parallelism)
        return check_restore(
            execution_graph, savepoint_path, allow_non_restored_state=allow_non_restored_state, spark=spark
        )

    @property
    def is_unbounded(self) -> bool:
        """Whether the pipeline reads an unbounded source (it then runs in the continuous mode)."""
        return is_unbounded(self.execution_graph)

    def run(
        self,
        spark: Any = None,
        *,
        parallelism: int | None = None,
        mode: str | None = None,
        live: bool = True,
        executor: str = "spark",
        from_savepoint: str | None = None,
        allow_non_restored_state: bool = False,
    ) -> JobResult | ContinuousJob:
        """Run the pipeline on ``executor``: Spark (``spark``, else the active or an embedded
        local session) or ``"local"``, this Python process.

        While it runs, the cell shows every subtask's state and counters (``live``); print
        sinks' lines follow when it finished. ``parallelism`` re-runs operators whose
        parallelism the program did not set at that parallelism, like ``flink run -p``;
        ``mode`` is ``"streaming"`` or ``"batch"``. Interrupting the kernel cancels the job.

        An unbounded pipeline starts in the background instead and its client is returned at
        once; the view keeps updating (printed lines, checkpoints). ``from_savepoint`` restores
        its state (``allow_non_restored_state`` skips state of operators it no longer has).
        """
        job_graph, execution_graph = self.compiled(parallelism, mode)
        physical_graph = self.physical_graph
        if parallelism is not None or mode is not None:
            physical_graph = passes.deploy(
                execution_graph, physical_graph.taskmanagers, physical_graph.slots_per_taskmanager
            )
        if from_savepoint is not None and not is_unbounded(execution_graph):
            raise ProgramError("Restoring from a savepoint needs an unbounded pipeline (a continuous job).")
        view = self._job_view(job_graph, physical_graph) if live else None
        if view is not None:
            view.display()
        output = self._run_output() if live else None
        if output is not None:
            output.display()
        try:
            client = submit(
                execution_graph,
                executor=executor,
                spark=spark,
                continuous=self.env.continuous_options(from_savepoint, allow_non_restored_state),
                on_output=output.epoch if output is not None else None,
            )
        except BaseException:
            if output is not None:
                output.ended("FAILED")
            raise
        with self._lock:
            self._runs.append(client)
        if isinstance(client, ContinuousJob):
            self._follow(client, view, output)
            return client
        ended = "FAILED"
        try:
            result = wait_for(
                client, on_progress=(lambda monitor: view.update(monitor.snapshot())) if view is not None else None
            )
            if output is not None:
                output.result(result)
            result.echo()
            ended = result.state
            return result
        except JobCancelledError:
            ended = "CANCELED"
            raise
        finally:
            with self._lock:
                self._runs.remove(client)
                self._last_end = ended
            if output is not None:
                output.ended(ended)

    def _job_view(self, job_graph: JobGraph, physical_graph: PhysicalGraph) -> JobView:
        """The live view of a run of ``job_graph``."""
        return JobView(job_graph, physical_graph)

    def _run_output(self) -> RunOutput | None:
        """What a run shows of its output besides the job view: nothing but the print sinks'
        lines for a DataStream pipeline."""
        return None

    def _follow(self, job: ContinuousJob, view: JobView | None, output: RunOutput | None = None) -> None:
        """Keep the view (and the list of runs) current from a thread of its own: the cell has returned."""

        def follow() -> None:
            while not job.get_job_status().is_globally_terminal:
                if view is not None:
                    view.update(job.snapshot())
                job.wait(0.5)
            if view is not None:
                view.update(job.snapshot())
            ended = str(job.get_job_status())
            if output is not None:
                output.ended(ended)
            savepoint = job.checkpoints.last_savepoint
            with self._lock:
                self._runs.remove(job)
                self._last_end = f"{ended} (savepoint {savepoint})" if savepoint is not None else ended

        threading.Thread(target=follow, name=f"flowmagic-view-{self.name}", daemon=True).start()

    @property
    def jobs(self) -> list[ContinuousJob]:
        """Its unbounded jobs now running."""
        with self._lock:
            return [run for run in self._runs if isinstance(run, ContinuousJob)]

    def status(self) -> str:
        """``RUNNING`` with the number of runs under way, else how the last run ended
        (``FINISHED``, with the savepoint it stopped with, ``CANCELED``, ``FAILED``), or ``-``
        if it never ran."""
        with self._lock:
            count, last = len(self._runs), self._last_end
        if count == 0:
            return last or "-"
        return "RUNNING" if count == 1 else f"RUNNING ({count} runs)"

    def cancel(self) -> int:
        """Cancel every run under way (``%flow cancel NAME``); how many there were."""
        with self._lock:
            runs = list(self._runs)
        failures = []
        for run in runs:
            try:
                run.cancel()
            except JobError as error:
                # The others are cancelled all the same; the first that did not end is said.
                failures.append(error)
        if failures:
            raise failures[0]
        return len(runs)

    def stop(self, savepoint: str) -> list[str]:
        """Flink's stop-with-savepoint for every unbounded job of the pipeline now running
        (``%flow stop NAME --savepoint DIR``): the paths of their savepoints."""
        jobs = self.jobs
        if not jobs:
            raise ProgramError(f"Pipeline {self.name!r} has no running unbounded job to stop.")
        if len(jobs) == 1:
            return [jobs[0].stop_with_savepoint(savepoint)]
        return [job.stop_with_savepoint(os.path.join(savepoint, job.get_job_id())) for job in jobs]
