"""When a FileSink closes its open part file and starts the next: Flink's rolling policies.

A part file rolls on an event (before a record is written), at a checkpoint (an epoch's
end in a continuous job), or when processing time passes a check (every bucket check
interval). Flink's ``DefaultRollingPolicy`` rolls a file larger than its part size, older
than its rollover interval or idle for its inactivity interval; ``OnCheckpointRollingPolicy``
rolls at every checkpoint and only then. A rolled file is committed (made visible) once the
checkpoint after it completes; the end of a bounded job commits every file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from flowmagic.errors import InvalidArgumentError

__all__ = ["DefaultRollingPolicy", "OnCheckpointRollingPolicy", "PartFileInfo", "RollingPolicy"]

_MB = 1024 * 1024


@dataclass(frozen=True)
class PartFileInfo:
    """What a policy knows of the open part file: its size in bytes, when it was opened and
    when it was last written to (processing time, ms)."""

    size: int
    creation_time: int
    last_update_time: int


class RollingPolicy(ABC):
    """Decides when the open part file rolls (PyFlink's ``RollingPolicy``)."""

    @staticmethod
    def default_rolling_policy(
        part_size: int = 128 * _MB, rollover_interval: int = 60 * 1000, inactivity_interval: int = 60 * 1000
    ) -> DefaultRollingPolicy:
        """Roll a part file over ``part_size`` bytes, older than ``rollover_interval`` ms, or
        not written to for ``inactivity_interval`` ms."""
        return DefaultRollingPolicy(part_size, rollover_interval, inactivity_interval)

    @staticmethod
    def on_checkpoint_rolling_policy() -> OnCheckpointRollingPolicy:
        """Roll at every checkpoint, and only then."""
        return OnCheckpointRollingPolicy()

    @abstractmethod
    def should_roll_on_event(self, part: PartFileInfo) -> bool:
        """Before a record is written to ``part``."""

    @abstractmethod
    def should_roll_on_checkpoint(self, part: PartFileInfo) -> bool:
        """At a checkpoint (a continuous job's epoch end)."""

    @abstractmethod
    def should_roll_on_processing_time(self, part: PartFileInfo, now: int) -> bool:
        """At a bucket check, processing time ``now``."""


@dataclass(frozen=True)
class DefaultRollingPolicy(RollingPolicy):
    """Flink's ``DefaultRollingPolicy`` (sizes in bytes, intervals in ms)."""

    part_size: int = 128 * _MB
    rollover_interval: int = 60 * 1000
    inactivity_interval: int = 60 * 1000

    def __post_init__(self) -> None:
        for name in ("part_size", "rollover_interval", "inactivity_interval"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise InvalidArgumentError(f"DefaultRollingPolicy {name} must be a positive int, got {value!r}")

    def should_roll_on_event(self, part: PartFileInfo) -> bool:
        return part.size > self.part_size

    def should_roll_on_checkpoint(self, part: PartFileInfo) -> bool:
        return part.size > self.part_size

    def should_roll_on_processing_time(self, part: PartFileInfo, now: int) -> bool:
        age, idle = now - part.creation_time, now - part.last_update_time
        return age >= self.rollover_interval or idle >= self.inactivity_interval


@dataclass(frozen=True)
class OnCheckpointRollingPolicy(RollingPolicy):
    """Flink's ``OnCheckpointRollingPolicy``: one part file per checkpoint interval."""

    def should_roll_on_event(self, part: PartFileInfo) -> bool:
        return False

    def should_roll_on_checkpoint(self, part: PartFileInfo) -> bool:
        return True

    def should_roll_on_processing_time(self, part: PartFileInfo, now: int) -> bool:
        return False
