"""Job-wide settings, Flink's ExecutionConfig and pipeline options: the builder writes them,
the passes and the runtime read them."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from flowmagic.vocabulary.dialect import JAVA, ApiDialect
from flowmagic.vocabulary.restart_strategy import RestartStrategy

__all__ = ["ContinuousOptions", "PipelineConfig", "RuntimeExecutionMode"]


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
    #: The API the program is written in: what its functions see where PyFlink differs from Java.
    dialect: ApiDialect = JAVA


@dataclass(frozen=True)
class ContinuousOptions:
    """How an unbounded job runs: Flink's checkpointing and savepoint-restore settings."""

    #: ``execution.checkpointing.interval`` in ms; None: checkpointing disabled.
    checkpoint_interval_ms: int | None = None
    #: Where checkpoints go (a path or ``file://`` URI); None: a temporary directory.
    checkpoint_storage: str | None = None
    #: ``execution.savepoint.path``: the savepoint (or retained checkpoint) to restore from.
    savepoint_path: str | None = None
    #: ``execution.savepoint.ignore-unclaimed-state``.
    allow_non_restored_state: bool = False
    #: ``execution.checkpointing.externalized-checkpoint-retention`` (the mode's name).
    checkpoint_retention: str = "NO_EXTERNALIZED_CHECKPOINTS"
    #: ``execution.checkpointing.num-retained``.
    checkpoints_retained: int = 1
    #: ``restart-strategy.type`` and its options; None: Flink's default (exponential-delay
    #: with checkpointing, else none).
    restart_strategy: RestartStrategy | None = None
    #: ``execution.checkpointing.savepoint-dir``: where savepoints go when none is named.
    savepoint_directory: str | None = None
