"""The windows of Flink's window TVFs, as Flink's slice assigners cut them.

TUMBLE, HOP and CUMULATE windows are aligned to the epoch (offset 0) and cut into slices: a
row goes into one slice, a window is the merge of its slices (Flink's ``SliceAssigners``).
HOP slices are one slide long (Flink slices a HOP only when the size is a multiple of
the slide) and a window ends every slide; CUMULATE slices are
one step long and a window ends every step, up to the max size. SESSION windows are merged
as rows arrive (:func:`merge_session`). Times are epoch milliseconds.
"""

from __future__ import annotations

from math import gcd

from flowmagic.graph.sql_runtime_ops import WindowSpec

__all__ = ["SliceAssigner", "merge_session", "tvf_windows", "window_start"]


def window_start(timestamp: int, size: int) -> int:
    """The start of the window of ``size`` holding ``timestamp`` (Flink's
    ``TimeWindow.getWindowStartWithOffset`` with offset 0; floor, also before the epoch)."""
    return timestamp - timestamp % size


def tvf_windows(window: WindowSpec, timestamp: int) -> list[tuple[int, int]]:
    """The windows ``(start, end)`` a row at ``timestamp`` belongs to, in the order Flink's
    window assigners list them (HOP: the latest first)."""
    if window.kind == "TUMBLE":
        start = window_start(timestamp, window.size)
        return [(start, start + window.size)]
    if window.kind == "HOP":
        out = []
        start = window_start(timestamp, window.step)
        while start > timestamp - window.size:
            out.append((start, start + window.size))
            start -= window.step
        return out
    if window.kind == "CUMULATE":
        start = window_start(timestamp, window.size)
        end = window_start(timestamp, window.step) + window.step
        out = []
        while end <= start + window.size:
            out.append((start, end))
            end += window.step
        return out
    raise ValueError(f"{window.kind} windows are not aligned")


class SliceAssigner:
    """Flink's slice assigner of a TUMBLE, HOP or CUMULATE window: which slice a row goes
    into, which slices a window merges, which window fires next and which slices expire."""

    def __init__(self, window: WindowSpec):
        self.kind = window.kind
        self.size = window.size
        self.step = window.step
        if self.kind == "TUMBLE":
            self.slice_size = self.size
        elif self.kind == "HOP":
            self.slice_size = gcd(self.size, self.step)  # the slide, as Flink requires
        elif self.kind == "CUMULATE":
            self.slice_size = self.step
        else:
            raise ValueError(f"{self.kind} windows cannot be sliced")
        #: How far apart the windows' ends are (Flink's ``getSliceEndInterval``).
        self.interval = self.size if self.kind == "TUMBLE" else self.step

    def slice_end(self, timestamp: int) -> int:
        return window_start(timestamp, self.slice_size) + self.slice_size

    def last_window_end(self, slice_end: int) -> int:
        """The end of the last window that holds the slice ending at ``slice_end``."""
        if self.kind == "TUMBLE":
            return slice_end
        if self.kind == "HOP":
            return slice_end - self.slice_size + self.size
        return window_start(slice_end - 1, self.size) + self.size

    def window_start(self, window_end: int) -> int:
        if self.kind == "CUMULATE":
            return window_start(window_end - 1, self.size)
        return window_end - self.size

    def slices(self, window_end: int) -> list[int]:
        """The ends of the slices the window ending at ``window_end`` merges, latest first."""
        start = self.window_start(window_end)
        return list(range(window_end, start, -self.slice_size))

    def next_window_end(self, window_end: int, empty: bool) -> int | None:
        """The window whose timer firing ``window_end`` registers (Flink's
        ``nextTriggerWindow``): HOP, the next one while windows hold rows; CUMULATE, the next
        one up to the max size; TUMBLE, none."""
        if self.kind == "HOP":
            return None if empty else window_end + self.step
        if self.kind == "CUMULATE":
            following = window_end + self.step
            return following if following <= self.window_start(window_end) + self.size else None
        return None

    def expired_slices(self, window_end: int) -> list[int]:
        """The slices no later window needs once the window ending at ``window_end`` fired."""
        if self.kind == "TUMBLE":
            return [window_end]
        if self.kind == "HOP":
            return [window_end - self.size + self.slice_size]
        if window_end == self.window_start(window_end) + self.size:
            return self.slices(window_end)
        return []


def merge_session(
    windows: list[tuple[int, int]], new: tuple[int, int]
) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """Add the session window ``new`` to a key's ``windows`` (disjoint): the window it becomes
    and the existing windows merged into it. Windows that touch merge (Flink's
    ``TimeWindow.intersects`` counts both ends)."""
    start, end = new
    merged = []
    # The key's windows are disjoint and apart (touching ones merged when they came), so one
    # pass in start order finds every window the growing window reaches.
    for window in sorted(windows):
        if window[0] <= end and window[1] >= start:
            merged.append(window)
            start, end = min(start, window[0]), max(end, window[1])
    return (start, end), merged
