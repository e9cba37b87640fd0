"""A named pipeline: a program's environment with its three graphs, to show, explain and run.

``%%flow NAME`` makes one, but it needs no IPython: ``Pipeline("wordcount", env)`` works in
any Python session.
"""

from __future__ import annotations

import threading
from typing import Any

from flowmagic import compile as passes
from flowmagic.api.environment import StreamExecutionEnvironment
from flowmagic.graph import ExecutionGraph, JobGraph, StreamGraph
from flowmagic.render import explain
from flowmagic.runtime import JobResult, execute
from flowmagic.widgets.graph_view import LEVELS, FlowGraphs
from flowmagic.widgets.job_view import JobView

__all__ = ["Pipeline", "PlanText"]


class PlanText(str):
    """Text a notebook shows as it is, not as a quoted string (``Pipeline.explain()``)."""

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


class Pipeline:
    """A pipeline: its environment and its three graphs.

    The graphs are built once, when the pipeline is made, with ``name`` as the job name.
    """

    def __init__(self, name: str, env: StreamExecutionEnvironment):
        self.name = name
        self.env = env
        compiled = passes.build(env.get_stream_graph(name))
        self.stream_graph = compiled.stream_graph
        self.job_graph = compiled.job_graph
        self.execution_graph = compiled.execution_graph
        self._cancel: threading.Event | None = None

    def __repr__(self) -> str:
        return (
            f"<Pipeline {self.name!r}: {self.stream_graph.job_type}, {len(self.stream_graph.nodes)} operators, "
            f"{len(self.job_graph.vertices)} job vertices, {self.execution_graph.num_subtasks} subtasks>"
        )

    def show(self, level: str = "all") -> FlowGraphs:
        """The graph widget: ``"all"`` three levels in tabs, or one of ``stream``, ``job``, ``execution``."""
        levels = tuple(LEVELS) if level == "all" else (level,)
        return FlowGraphs(self.name, self.stream_graph, self.job_graph, self.execution_graph, levels=levels)

    def explain(self) -> PlanText:
        """The three graphs as text, in the spirit of Flink's ``EXPLAIN``."""
        return PlanText(explain(self.stream_graph, self.job_graph, self.execution_graph))

    def graph(self, level: str) -> StreamGraph | JobGraph | ExecutionGraph:
        """The StreamGraph, JobGraph or ExecutionGraph, by level name."""
        graphs: dict[str, StreamGraph | JobGraph | ExecutionGraph] = {
            "stream": self.stream_graph,
            "job": self.job_graph,
            "execution": self.execution_graph,
        }
        return graphs[level]

    def run(
        self,
        spark: Any = None,
        *,
        parallelism: int | None = None,
        mode: str | None = None,
        live: bool = True,
        executor: str = "spark",
    ) -> JobResult:
        """Run the pipeline on ``executor``: Spark (``spark``, else the active or an embedded
        local session) or ``"local"``, this Python process.

        While it runs, the cell shows every subtask's state and counters (``live``); print
        sinks' lines follow when it finished. ``parallelism`` re-runs operators whose
        parallelism the program did not set at that parallelism, like ``flink run -p``;
        ``mode`` is ``"streaming"`` or ``"batch"``. Interrupting the kernel cancels the job.
        """
        job_graph, execution_graph = self.job_graph, self.execution_graph
        if parallelism is not None or mode is not None:
            compiled = passes.build(self.env.get_stream_graph(self.name, parallelism=parallelism, runtime_mode=mode))
            job_graph, execution_graph = compiled.job_graph, compiled.execution_graph
        view = JobView(job_graph) if live else None
        if view is not None:
            view.display()
        self._cancel = threading.Event()
        try:
            return execute(
                execution_graph,
                executor=executor,
                spark=spark,
                cancel_event=self._cancel,
                on_progress=(lambda monitor: view.update(monitor.snapshot())) if view is not None else None,
            )
        finally:
            self._cancel = None

    def cancel(self) -> bool:
        """Cancel the running job, if any (``%flow cancel NAME``); True if one was running."""
        if self._cancel is None:
            return False
        self._cancel.set()
        return True
