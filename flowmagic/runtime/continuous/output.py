"""What a continuous job's sinks make, handed on once each epoch completed: to the live
view (the newest printed lines), to the job's ``on_output``, and to the iterator of an
unbounded ``execute_and_collect()``. Each sink says where its payloads go
(``Sink.deliver_epoch``)."""

from __future__ import annotations

import queue
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flowmagic.errors import JobCancelledError
from flowmagic.runtime.continuous.status import JobStatus

if TYPE_CHECKING:
    from flowmagic.runtime.continuous.job import ContinuousJob

__all__ = ["PRINTED_TAIL", "CollectedRecords", "EpochOutput", "OutputFanOut"]

#: How many of the newest printed lines a job keeps for its live view.
PRINTED_TAIL = 40


@dataclass
class EpochOutput:
    """What one epoch's sinks made, handed on once the epoch completed."""

    epoch: int
    printed: list[tuple[bool, str]] = field(default_factory=list)
    collected: dict[int, list[Any]] = field(default_factory=dict)
    #: The file sinks' committables (see :class:`FileCommits`), for the job to commit.
    committables: list[Any] = field(default_factory=list)


class OutputFanOut:
    """Hands each completed epoch's output on: counts and keeps the newest printed lines,
    then calls ``on_output``."""

    def __init__(self, on_output: Callable[[EpochOutput], None] | None):
        self.on_output = on_output
        self.printed_total = 0
        #: The newest printed lines, for views that show a job's output as it comes.
        self.printed_tail: deque[str] = deque(maxlen=PRINTED_TAIL)

    def hand_on(self, output: EpochOutput) -> None:
        self.printed_total += len(output.printed)
        self.printed_tail.extend(line for _to_stderr, line in output.printed[-PRINTED_TAIL:])
        if self.on_output is not None and (output.printed or output.collected):
            self.on_output(output)


class CollectedRecords:
    """``execute_and_collect()`` of an unbounded job: its records as they arrive, until the
    job ends; ``close()`` (or leaving a ``with`` block) cancels it."""

    def __init__(self, node_id: int):
        self._node_id = node_id
        self._queue: queue.Queue[list[Any]] = queue.Queue()
        #: The epoch's records being handed out, and the next one's place (an epoch may hold
        #: hundreds of thousands: taking them from the front of the list would be quadratic).
        self._pending: list[Any] = []
        self._position = 0
        self._job: ContinuousJob | None = None

    def attach(self, job: ContinuousJob) -> None:
        self._job = job

    def take(self, output: EpochOutput) -> None:
        """The job's ``on_output``: keep the collect sink's records of an epoch."""
        records = output.collected.get(self._node_id)
        if records:
            self._queue.put(records)

    def limited(self, limit: int) -> Iterator[Any]:
        """The first ``limit`` records; the job is cancelled after the last of them."""
        try:
            for position, record in enumerate(self, 1):
                yield record
                if position >= limit:
                    return
        finally:
            self.close()

    def __iter__(self) -> CollectedRecords:
        return self

    def __next__(self) -> Any:
        job = self._job
        assert job is not None, "attach() the job first"
        try:
            while self._position >= len(self._pending):
                if job.status.is_globally_terminal and self._queue.empty():
                    if job.status is JobStatus.FAILED and job.error is not None:
                        raise job.error
                    raise StopIteration
                try:
                    self._pending, self._position = self._queue.get(timeout=0.2), 0
                except queue.Empty:
                    continue
        except KeyboardInterrupt:
            job.cancel()
            raise JobCancelledError(f"Job {job.graph.job_name!r} was cancelled.") from None
        record = self._pending[self._position]
        self._position += 1
        return record

    def close(self) -> None:
        if self._job is not None:
            self._job.cancel()

    def __enter__(self) -> CollectedRecords:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
