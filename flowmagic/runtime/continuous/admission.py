"""Admission control: how many records a continuous job's next epoch takes from a source.

An epoch costs a fixed time (Spark's batch and job, the state's files: a quarter of a second
on a quiet machine, seconds on a busy one) plus a time per record. Larger epochs spread the
fixed time over more records, so the admission doubles (up to three times after one epoch)
while that raises the records per second markedly, and only as long as the doubled epoch would
still end within a budget:
stops and savepoints are served between epochs, so short epochs keep them prompt. On a busy
machine, whose fixed time alone may exceed the budget of a quiet one's epochs, the budget is
a quarter more than the fixed time (a stop waits for it anyway), so epochs still grow as far
as they pay.

The two parts are measured in every epoch, not inferred from how long epochs of two sizes
took (on a busy machine two epochs of one size differ by seconds): the epoch's subtasks
report the time they worked for their records (their Spark tasks' time, stage by stage);
what the epoch took beyond that is its fixed time. The fixed time is the median of the last
epochs', the time per record that of the epochs of the current admission (a smaller epoch's
is higher: each subtask's own fixed work is spread over fewer records), so that one slow
epoch neither shrinks the admission (a longer fixed time is no reason to take fewer records)
nor stops it from growing.
"""

from __future__ import annotations

import statistics
from collections import deque

__all__ = ["AdmissionControl"]


class AdmissionControl:
    """The admission of a job's sources (records per epoch), adapted after every epoch."""

    #: The first epochs' admission, the time a doubled epoch may take (s), the time after
    #: which an epoch shrinks it (s), and how much more records/s a doubling must bring to
    #: be made. When an epoch's fixed time alone is long (a busy machine), the budget and the
    #: long time are the fixed time times these factors.
    FIRST = 1_000
    BUDGET = 2.0
    LONG = 2.5
    WORTH_GROWING = 1.1
    BUSY_BUDGET, BUSY_LONG = 1.25, 1.5
    #: How many of the last epochs the fixed time (and the time per record) is the median of.
    REMEMBERED = 5
    #: How many times larger the next epoch may be: where an epoch's records take a small part
    #: of it (a busy machine's epochs take seconds), doubling alone would take many epochs.
    MOST_GROWTH = 8

    def __init__(self, most: int):
        #: How many records the next epoch admits from each source.
        self.records = self.FIRST
        self.most = most
        self._fixed: deque[float] = deque(maxlen=self.REMEMBERED)
        #: The time per record of the epochs of the current admission.
        self._per_record: deque[float] = deque(maxlen=self.REMEMBERED)

    @property
    def fixed(self) -> float | None:
        """An epoch's fixed time (s), as the last epochs measured it (None: none did yet)."""
        return statistics.median(self._fixed) if self._fixed else None

    def epoch_ran(self, admitted: int, took: float, saturated: bool, work: float) -> None:
        """An epoch that admitted ``admitted`` records per source took ``took`` s, of which
        its subtasks worked ``work`` s for its records; ``saturated`` when a source had that
        many for it (the admission, not the input, bounded it)."""
        self._fixed.append(max(took - work, 0.0))
        fixed = statistics.median(self._fixed)
        if not saturated or admitted != self.records:
            return
        self._per_record.append(work / admitted)
        per_record = statistics.median(self._per_record)
        budget = max(self.BUDGET, self.BUSY_BUDGET * fixed)
        if took > max(self.LONG, self.BUSY_LONG * fixed) and fixed + work > budget:
            # Its records, not a passing slowness of the machine, made it long: take as many
            # as fit the budget at this epoch's time per record (a slow pipeline's may grow).
            fitting = int((budget - fixed) * admitted / work)
            self._admit(max(min(admitted // 2, fitting), self.FIRST))
            return
        grown = admitted
        while grown < min(admitted * self.MOST_GROWTH, self.most) and self._worth_doubling(
            grown, fixed, per_record, budget
        ):
            grown *= 2
        self._admit(min(grown, self.most))

    def _worth_doubling(self, admitted: int, fixed: float, per_record: float, budget: float) -> bool:
        """Whether epochs of twice ``admitted`` records would fit ``budget`` and bring
        markedly more records/s: doubling an epoch of fixed time F and record time R brings
        2(F + R) / (F + 2R) times as many."""
        now, doubled = fixed + per_record * admitted, fixed + per_record * 2 * admitted
        return doubled <= budget and (doubled == 0 or 2 * now / doubled >= self.WORTH_GROWING)

    def _admit(self, records: int) -> None:
        if records != self.records:
            self.records = records
            self._per_record.clear()
