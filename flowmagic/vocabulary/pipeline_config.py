"""Job-wide settings, Flink's ExecutionConfig and pipeline options: the builder writes them,
the passes and the runtime read them."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["PipelineConfig", "RuntimeExecutionMode"]


class RuntimeExecutionMode(enum.StrEnum):
    """Flink's ``RuntimeExecutionMode``: AUTOMATIC runs BATCH when every source is bounded."""

    STREAMING = "STREAMING"
    BATCH = "BATCH"
    AUTOMATIC = "AUTOMATIC"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class PipelineConfig:
    """The settings a StreamGraph is generated with.

    ``parallelism`` is ``parallelism.default``; ``max_parallelism`` is
    ``pipeline.max-parallelism`` (-1 when unset); ``job_name`` overrides Flink's default
    ``Flink Streaming Job`` / ``Flink Batch Job``.
    """

    parallelism: int
    max_parallelism: int = -1
    chaining_enabled: bool = True
    runtime_mode: RuntimeExecutionMode = RuntimeExecutionMode.STREAMING
    job_name: str | None = None
    #: Like ``flink run -p N``: operators whose parallelism the program did not set run at
    #: ``parallelism`` instead of the default they were created with.
    override_parallelism: bool = False
    #: Flink's ``pipeline.global-job-parameters``: what ``get_job_parameter`` answers.
    job_parameters: tuple[tuple[str, str], ...] = ()
    #: ``pipeline.auto-watermark-interval``: 0 turns periodic watermarks off (sources' and
    #: assigners' watermarks then come only at the end of input), as in Flink.
    auto_watermark_interval_ms: int = 200
    #: A program of PyFlink's API: its functions see what PyFlink's see where that differs.
    pyflink_api: bool = False
