"""A continuous job's status: Flink's ``JobStatus``."""

from __future__ import annotations

import enum

__all__ = ["JobStatus"]


class JobStatus(enum.StrEnum):
    """Flink's ``JobStatus``, as ``JobClient.get_job_status()`` returns it."""

    INITIALIZING = "INITIALIZING"
    RUNNING = "RUNNING"
    RESTARTING = "RESTARTING"
    CANCELLING = "CANCELLING"
    CANCELED = "CANCELED"
    FINISHED = "FINISHED"
    FAILED = "FAILED"

    @property
    def is_globally_terminal(self) -> bool:
        return self in (JobStatus.CANCELED, JobStatus.FINISHED, JobStatus.FAILED)

    def __str__(self) -> str:
        return self.value
