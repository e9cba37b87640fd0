"""Processing time, as operators read it: the wall clock, or the logged time of an epoch.

A bounded job reads the wall clock. A continuous job's subtasks read the time its driver
logged for the epoch they run, so that a replayed epoch sees the same time and makes the
same records (Flink's processing time is the wall clock; within one epoch it stands still).
"""

from __future__ import annotations

import time

__all__ = ["WALL_CLOCK", "Clock", "EpochClock"]


class Clock:
    """The wall clock, in epoch milliseconds."""

    def now(self) -> int:
        return int(time.time() * 1000)


class EpochClock(Clock):
    """The time of the epoch being run; the driver moves it forward epoch by epoch."""

    def __init__(self, now: int):
        self.time = now

    def now(self) -> int:
        return self.time


WALL_CLOCK = Clock()
