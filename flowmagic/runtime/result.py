"""What a finished job hands back: its sinks' results and its final metrics."""

from __future__ import annotations

import itertools
import sys
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from flowmagic.runtime.metric_reports import JobReport
from flowmagic.vocabulary.job_execution_result import JobExecutionResult

__all__ = ["JobResult", "echo_printed"]


def echo_printed(printed: Iterable[tuple[bool, str]]) -> None:
    """Print lines ``(to_stderr, line)`` to this process's stdout and stderr, as they were
    printed: each run of one stream's lines in one write (a job that prints every update
    prints hundreds of thousands a second)."""
    for to_stderr, lines in itertools.groupby(printed, key=lambda printed_line: printed_line[0]):
        stream = sys.stderr if to_stderr else sys.stdout
        stream.write("".join([line + "\n" for _to_stderr, line in lines]))


@dataclass
class JobResult(JobExecutionResult):
    """The outcome of a finished job: what its sinks produced and the final metrics; also
    PyFlink's ``JobExecutionResult`` (``get_job_id()``, ``get_net_runtime()``...)."""

    job_name: str
    job_type: str
    state: str
    duration: float
    #: Sink node id -> its records in subtask order (``execute_and_collect``).
    results: dict[int, list[Any]] = field(default_factory=dict, repr=False)
    #: What the print sinks printed, as ``(to_stderr, line)``, subtask by subtask.
    printed: list[tuple[bool, str]] = field(default_factory=list, repr=False)
    #: Files the file sinks committed.
    committed: list[str] = field(default_factory=list, repr=False)
    #: Its progress when it ended (None until it did).
    metrics: JobReport | None = field(default=None, repr=False)
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def collected(self, node_id: int) -> list[Any]:
        """The records the sink node ``node_id`` received, in subtask order."""
        return self.results.get(node_id, [])

    def echo(self) -> None:
        """Print the print sinks' lines to this process's stdout and stderr, as they were printed."""
        echo_printed(self.printed)

    def __repr__(self) -> str:
        return (
            f"<JobResult {self.job_name!r} {self.state} in {self.duration:.2f}s: "
            f"{len(self.printed)} printed lines, {len(self.committed)} committed files>"
        )
