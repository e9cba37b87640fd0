"""Checkpointing settings, as Flink's ``CheckpointConfig`` holds them."""

from __future__ import annotations

from enum import Enum

from flowmagic.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["CheckpointConfig", "CheckpointingMode", "ExternalizedCheckpointRetention"]


class CheckpointingMode(Enum):
    """Flink's checkpointing guarantee; flowmagic's epochs are always exactly once, so either
    is accepted by ``enable_checkpointing(interval, mode)``."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1


class ExternalizedCheckpointRetention(Enum):
    """What becomes of a job's retained checkpoints when it ends (Flink's
    ``execution.checkpointing.externalized-checkpoint-retention``). Every mode deletes them
    when the job finishes; a retained one restores like a savepoint
    (``execution.savepoint.path`` = ``<checkpoint dir>/<job id>/chk-<n>``)."""

    #: Kept when the job is cancelled or fails.
    RETAIN_ON_CANCELLATION = 0
    #: Kept when the job fails, deleted when it is cancelled.
    DELETE_ON_CANCELLATION = 1
    #: Deleted whenever the job ends (Flink's default).
    NO_EXTERNALIZED_CHECKPOINTS = 2


class CheckpointConfig:
    """``env.get_checkpoint_config()``: the checkpoint interval and where checkpoints go.

    In the continuous mode every epoch snapshots the job's state; an epoch that ends at
    least ``interval`` ms after the last checkpoint completes a checkpoint (counted and shown
    like Flink's, and the point at which transactional sinks commit).
    """

    def __init__(self) -> None:
        self._interval = -1
        self._storage: str | None = None
        self._retention = ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS
        self._retained = 1

    def set_checkpoint_interval(self, interval: int) -> CheckpointConfig:
        if isinstance(interval, bool) or not isinstance(interval, int):
            raise InvalidTypeError(f"checkpoint interval must be milliseconds as int, got {interval!r}")
        if interval < 10:
            raise InvalidArgumentError("Checkpoint interval must be larger than or equal to 10 ms")
        self._interval = interval
        return self

    def get_checkpoint_interval(self) -> int:
        """The interval in ms; -1 when checkpointing is disabled."""
        return self._interval

    def is_checkpointing_enabled(self) -> bool:
        return self._interval > 0

    def set_checkpoint_storage(self, storage: object) -> CheckpointConfig:
        """Where checkpoints go: a path or URI (``file:///...``), or an object with one
        (``FileSystemCheckpointStorage(path)``, ``get_checkpoint_path()``)."""
        path = storage if isinstance(storage, str) else getattr(storage, "get_checkpoint_path", lambda: None)()
        if not isinstance(path, str) or not path:
            raise InvalidTypeError(f"checkpoint storage must be a path or URI, got {storage!r}")
        self._storage = path
        return self

    def set_checkpoint_storage_dir(self, path: str) -> CheckpointConfig:
        """Flink's shortcut for ``set_checkpoint_storage(path)``."""
        return self.set_checkpoint_storage(path)

    def get_checkpoint_storage(self) -> str | None:
        return self._storage

    def set_externalized_checkpoint_retention(
        self, retention: ExternalizedCheckpointRetention | str
    ) -> CheckpointConfig:
        """Keep the job's last checkpoints when it is cancelled or fails (see
        :class:`ExternalizedCheckpointRetention`)."""
        if isinstance(retention, str):
            try:
                retention = ExternalizedCheckpointRetention[retention.upper()]
            except KeyError:
                raise InvalidArgumentError(
                    f"Could not parse value '{retention}' for key "
                    "'execution.checkpointing.externalized-checkpoint-retention'. Expected one of: "
                    f"[{', '.join(mode.name for mode in ExternalizedCheckpointRetention)}]"
                ) from None
        if not isinstance(retention, ExternalizedCheckpointRetention):
            raise InvalidTypeError(f"expected an ExternalizedCheckpointRetention, got {retention!r}")
        self._retention = retention
        return self

    def get_externalized_checkpoint_retention(self) -> ExternalizedCheckpointRetention:
        return self._retention

    def is_externalized_checkpoints_enabled(self) -> bool:
        return self._retention is not ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS

    def set_num_retained_checkpoints(self, retained: int) -> CheckpointConfig:
        """How many completed checkpoints a job keeps (``execution.checkpointing.num-retained``)."""
        if isinstance(retained, bool) or not isinstance(retained, int):
            raise InvalidTypeError(f"the number of retained checkpoints must be an int, got {retained!r}")
        if retained < 1:
            raise InvalidArgumentError(
                f"The configured value of 'execution.checkpointing.num-retained' is {retained}: it must be at least 1."
            )
        self._retained = retained
        return self

    def get_num_retained_checkpoints(self) -> int:
        return self._retained
