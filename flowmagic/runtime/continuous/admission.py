"""Admission control: how many records a continuous job's next epoch takes from a source.

An epoch costs a fixed time (Spark's batch and job, the state's files: a quarter of a second
on a quiet machine, seconds on a busy one) plus a time per record. Larger epochs spread the
fixed time over more records, so the admission doubles while that raises the records per
second, and only as long as the doubled epoch would still end within a budget: stops and
savepoints are served between epochs, so short epochs keep them prompt. An epoch much longer
than that halves it. The time an epoch's records take is learnt from two sizes' rates, so a
busy machine, whose fixed time alone may exceed the budget of a quiet one's epochs, still
grows its epochs as far as they pay: there the budget is a quarter more than the fixed time
(a stop waits for it anyway).
"""

from __future__ import annotations

__all__ = ["AdmissionControl"]


class AdmissionControl:
    """The admission of a job's sources (records per epoch), adapted after every epoch."""

    #: The first epochs' admission, the time a doubled epoch may take (s), the time after
    #: which an epoch halves it (s), and how much more records/s a doubling must have brought
    #: to be doubled again. When an epoch's fixed time alone is long (a busy machine), the
    #: budget and the long time are the fixed time times these factors.
    FIRST = 1_000
    BUDGET = 2.0
    LONG = 2.5
    WORTH_GROWING = 1.1
    BUSY_BUDGET, BUSY_LONG = 1.25, 1.5

    def __init__(self, most: int):
        #: How many records the next epoch admits from each source.
        self.records = self.FIRST
        self.most = most
        #: Per admission, the records/s of the epochs that took all of it.
        self._rates: dict[int, float] = {}
        #: The fixed time of an epoch, as the last epochs tell it (None: not known).
        self._fixed: float | None = None

    def epoch_ran(self, admitted: int, took: float, rate: float | None) -> None:
        """An epoch that admitted ``admitted`` records per source took ``took`` s and, if a
        source had that many for it, made ``rate`` records/s (None: the input, not the
        admission, bounded it)."""
        doubled = None
        if rate is not None and admitted == self.records:
            previous = self._rates.get(admitted)
            rate = self._rates[admitted] = rate if previous is None else (previous + rate) / 2
            smaller = admitted // 2
            half = self._rates.get(smaller)
            if half is not None:
                # The time per record: what the larger of two epochs took more, per record more.
                per_record = max((admitted / rate - smaller / half) / (admitted - smaller), 0.0)
                self._fixed = max(took - per_record * admitted, 0.0)
                doubled = took + per_record * admitted if rate >= self.WORTH_GROWING * half else None
            elif self._fixed is None:
                # Nothing measured yet: the fixed time may be all this epoch took (a doubling tells).
                doubled = took
            else:
                doubled = took + max(took - self._fixed, 0.0)
        # Not measured yet: this epoch's time is the most it can be.
        fixed = self._fixed if self._fixed is not None else took
        if took > max(self.LONG, self.BUSY_LONG * fixed) and admitted > self.FIRST:
            self.records = max(admitted // 2, self.FIRST)
            self._rates.clear()  # the machine or the input changed: measure again
        elif doubled is not None and doubled <= max(self.BUDGET, self.BUSY_BUDGET * fixed):
            self.records = min(admitted * 2, self.most)
