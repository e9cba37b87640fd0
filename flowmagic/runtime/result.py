"""What a finished job hands back: its sinks' results and its final metrics."""

from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass, field
from typing import Any

from flowmagic.vocabulary.job_execution_result import JobExecutionResult

__all__ = ["JobResult"]


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
    metrics: dict[str, Any] = field(default_factory=dict, repr=False)
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def collected(self, node_id: int) -> list[Any]:
        """The records the sink node ``node_id`` received, in subtask order."""
        return self.results.get(node_id, [])

    def echo(self) -> None:
        """Print the print sinks' lines to this process's stdout and stderr, as they were printed."""
        for to_stderr, line in self.printed:
            print(line, file=sys.stderr if to_stderr else sys.stdout)

    def __repr__(self) -> str:
        return (
            f"<JobResult {self.job_name!r} {self.state} in {self.duration:.2f}s: "
            f"{len(self.printed)} printed lines, {len(self.committed)} committed files>"
        )
