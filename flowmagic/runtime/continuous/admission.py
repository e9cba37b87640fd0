"""Admission control: how many records a continuous job's next epoch takes from a source.

An epoch costs a fixed time (Spark's batch and job, the state's files: a quarter of a second
on a quiet machine, seconds on a busy one) plus a time per record. Larger epochs spread the
fixed time over more records, so the admission doubles while that raises the records per
second, and only as long as the doubled epoch would still end within a budget: stops and
savepoints are served between epochs, so short epochs keep them prompt. An epoch longer than
that halves it. The time an epoch's records take is learnt from two sizes' rates, so a busy
machine, whose fixed time alone may exceed the budget of a quiet one's epochs, still grows
its epochs as far as they pay.
"""

from __future__ import annotations

__all__ = ["AdmissionControl"]


class AdmissionControl:
    """The admission of a job's sources (records per epoch), adapted after every epoch."""

    #: The first epochs' admission, the time a doubled epoch may take (s), the time after
    #: which an epoch halves it (s), and how much more records/s a doubling must have brought
    #: to be doubled again.
    FIRST = 1_000
    BUDGET = 2.0
    LONG = 2.5
    WORTH_GROWING = 1.1

    def __init__(self, most: int):
        #: How many records the next epoch admits from each source.
        self.records = self.FIRST
        self.most = most
        #: Per admission, the records/s of the epochs that took all of it.
        self._rates: dict[int, float] = {}

    def epoch_ran(self, admitted: int, took: float, rate: float | None) -> None:
        """An epoch that admitted ``admitted`` records per source took ``took`` s and, if a
        source had that many for it, made ``rate`` records/s (None: the input, not the
        admission, bounded it)."""
        if took > self.LONG:
            self.records = max(admitted // 2, self.FIRST)
            self._rates.clear()  # the machine or the input changed: measure again
            return
        if rate is None or admitted != self.records:
            return
        previous = self._rates.get(admitted)
        rate = self._rates[admitted] = rate if previous is None else (previous + rate) / 2
        smaller = admitted // 2
        half = self._rates.get(smaller)
        if half is None:
            # No smaller epoch measured: its fixed time may be all this one took.
            grows, doubled = True, took
        else:
            # The time per record: what the larger of two epochs took more, per record more.
            per_record = max((admitted / rate - smaller / half) / (admitted - smaller), 0.0)
            grows, doubled = rate >= self.WORTH_GROWING * half, took + per_record * admitted
        if grows and doubled <= self.BUDGET:
            self.records = min(admitted * 2, self.most)
