"""PyFlink's ``JobExecutionResult`` and ``JobID``: what ``env.execute()`` tells of a finished job."""

from __future__ import annotations

from typing import Any

__all__ = ["JobExecutionResult", "JobID"]


class JobID:
    """A job's id: 32 hex digits, printed as Flink prints a ``JobID``."""

    __slots__ = ("_hex",)

    def __init__(self, hex_id: str):
        self._hex = hex_id

    def __str__(self) -> str:
        return self._hex

    def __repr__(self) -> str:
        return f"JobID({self._hex!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobID) and other._hex == self._hex

    def __hash__(self) -> int:
        return hash(self._hex)


class JobExecutionResult:
    """The result of a job execution, as PyFlink's: its id, its net runtime and its
    accumulators. A job result (flowmagic's ``JobResult``) has ``job_id`` and ``duration``
    (seconds)."""

    job_id: str
    duration: float

    def get_job_id(self) -> JobID:
        """The id the job ran under (a continuous job's is its client's ``get_job_id()``)."""
        return JobID(self.job_id)

    def get_net_runtime(self) -> int:
        """How long the job ran, in milliseconds (from its first task's start to its end)."""
        return round(self.duration * 1000)

    def get_accumulator_result(self, accumulator_name: str) -> Any:
        """The value of the accumulator ``accumulator_name``, None if the job made none."""
        return self.get_all_accumulator_results().get(accumulator_name)

    def get_all_accumulator_results(self) -> dict[str, Any]:
        """Accumulators by name. Python functions register none, in PyFlink as in flowmagic
        (PyFlink's ``RuntimeContext`` has no accumulators), so this is ``{}``, as PyFlink
        returns for a Python job."""
        return {}

    def __str__(self) -> str:
        return (
            f"Program execution finished\nJob with JobID {self.job_id} has finished.\n"
            f"Job Runtime: {self.get_net_runtime()} ms\n"
        )
