"""Checkpointing settings, as Flink's ``CheckpointConfig`` holds them."""

from __future__ import annotations

from enum import Enum

from flowmagic.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["CheckpointConfig", "CheckpointingMode"]


class CheckpointingMode(Enum):
    """Flink's checkpointing guarantee; flowmagic's epochs are always exactly once, so either
    is accepted by ``enable_checkpointing(interval, mode)``."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1


class CheckpointConfig:
    """``env.get_checkpoint_config()``: the checkpoint interval and where checkpoints go.

    In the continuous mode every epoch snapshots the job's state; an epoch that ends at
    least ``interval`` ms after the last checkpoint completes a checkpoint (counted and shown
    like Flink's, and the point at which transactional sinks commit).
    """

    def __init__(self) -> None:
        self._interval = -1
        self._storage: str | None = None

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
