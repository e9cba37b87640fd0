"""Busy, idle and back-pressured time of subtasks: what Flink's web UI colours vertices by.

Flink measures, per task and second, the time it waits for input (idle), waits for an output
buffer (back-pressured) and, the rest, processes records (busy). On Spark the two sides of an
exchange do not run at once: a stage's tasks run, and then the next stage's read what they
wrote. So a subtask is busy while its Spark task runs for it (reading its input, in its
operators, handing on its output), and idle the rest of the time; and it never waits for its
consumers, since its output lands whole in Spark's shuffle. What it would have waited for in
Flink is derived instead: Flink's network buffers hold little, so a producer goes no faster
than its slowest consumer. A subtask whose consumers took longer over their input (their busy
time plus their own back-pressure) than it took to produce its output is back-pressured for
the difference, as a slow operator back-pressures everything before it in Flink.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from flowmagic.runtime.metric_reports import JobReport

__all__ = ["SubtaskLoad", "bounded_load", "consumers_of", "derive_load", "since_measured", "vertex_percentages"]

#: A subtask: (vertex id, subtask index).
SubtaskKey = tuple[str, int]


@dataclass(frozen=True)
class SubtaskLoad:
    """Flink's busyTimeMsPerSecond and backPressuredTimeMsPerSecond of one subtask; idle is
    the rest of each second."""

    busy: float
    backpressured: float

    @property
    def idle(self) -> float:
        return max(1000.0 - self.busy - self.backpressured, 0.0)


def consumers_of(channels: Mapping[str, int]) -> list[SubtaskKey]:
    """The consumer subtasks a subtask handed records to, from its per-channel counts (keyed
    ``"<vertex id>/<subtask>"``)."""
    found = []
    for key, count in channels.items():
        vertex, _, index = key.rpartition("/")
        if count > 0 and index.isdigit():
            found.append((vertex, int(index)))
    return found


def derive_load(
    busy: Mapping[SubtaskKey, float], consumers: Mapping[SubtaskKey, Iterable[SubtaskKey]], period: float
) -> dict[SubtaskKey, SubtaskLoad]:
    """Each subtask's load over ``period`` seconds, in which it was busy ``busy[s]`` seconds
    and handed records to ``consumers[s]`` (see the module's docstring)."""
    occupied: dict[SubtaskKey, float] = {}

    def occupation(key: SubtaskKey) -> float:
        # The time a subtask takes over its input: its own busy time, or, when longer, the
        # time its consumers take over what it hands them. Exchanges form no cycles.
        known = occupied.get(key)
        if known is None:
            own = busy.get(key, 0.0)
            known = occupied[key] = max([own, *(occupation(c) for c in consumers.get(key, ()) if c in busy)])
        return known

    period = max(period, 1e-3)
    loads = {}
    for key, own in busy.items():
        busy_ms = min(own / period, 1.0) * 1000
        pressured_ms = min(max(occupation(key) - own, 0.0) / period * 1000, 1000 - busy_ms)
        loads[key] = SubtaskLoad(busy_ms, pressured_ms)
    return loads


def since_measured(load: SubtaskLoad, start: float, end: float, now: float) -> SubtaskLoad:
    """``load``, measured from ``start`` to ``end``, as it stands at ``now`` when nothing ran
    after ``end`` (a continuous job without input runs no epoch): unchanged until as long
    again has passed (the usual wait for the next epoch), then over the time since ``start``,
    so that an idle job fades to idle, as it does in Flink's web UI."""
    span = end - start
    share = min(1.0, 2 * span / (now - start)) if span > 0 and now > start else 1.0
    return SubtaskLoad(load.busy * share, load.backpressured * share)


def bounded_load(report: JobReport) -> dict[SubtaskKey, SubtaskLoad]:
    """The load of a bounded job's subtasks (those that started) over the time its subtasks
    ran, from the first's start to the last's end: busy while each ran, back-pressured as
    derived from the records it handed its consumers."""
    busy: dict[SubtaskKey, float] = {}
    consumers: dict[SubtaskKey, list[SubtaskKey]] = {}
    first, last = float("inf"), float("-inf")
    for vertex in report.vertices:
        for subtask in vertex.subtasks:
            if subtask.duration is None or subtask.start_time is None:
                continue
            key = (vertex.id, subtask.subtask)
            busy[key] = subtask.duration
            consumers[key] = consumers_of(subtask.channels)
            first, last = min(first, subtask.start_time), max(last, subtask.start_time + subtask.duration)
    return derive_load(busy, consumers, last - first) if busy else {}


def vertex_percentages(loads: Iterable[SubtaskLoad | None]) -> tuple[float, float] | None:
    """A vertex's busy and back-pressured percentage, as Flink's JobGraph shows them: the
    most of any of its subtasks (None: none measured)."""
    measured = [load for load in loads if load is not None]
    if not measured:
        return None
    return max(load.busy for load in measured) / 10, max(load.backpressured for load in measured) / 10
