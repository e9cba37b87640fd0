"""The windows of Flink's window TVFs, as Flink's slice assigners cut them.

TUMBLE, HOP and CUMULATE windows are aligned to the epoch (offset 0) and cut into slices: a
row goes into one slice, a window is the merge of its slices (Flink's ``SliceAssigners``).
HOP slices are one slide long (Flink slices a HOP only when the size is a multiple of
the slide) and a window ends every slide; CUMULATE slices are
one step long and a window ends every step, up to the max size. SESSION windows are merged
as rows arrive (:func:`merge_session`). Times are epoch milliseconds.

Over a TIMESTAMP_LTZ time attribute Flink aligns windows in the session time zone
(``table.local-time-zone``, the window's *shift time zone*): a row's time is shifted to the
local wall clock's milliseconds, windows are cut there (1-day windows start at local midnight),
``window_start``/``window_end`` are those local TIMESTAMPs, and a window fires when the
watermark passes the instant its local end falls on (:class:`ShiftTimeZone`, Flink's
``TimeWindowUtil``).
"""

from __future__ import annotations

import datetime
from math import gcd

from flowmagic.graph.sql_runtime_ops import WindowSpec
from flowmagic.runtime.records import MAX_WATERMARK
from flowmagic.runtime.sql.values import zone_of

__all__ = ["ShiftTimeZone", "SliceAssigner", "merge_session", "tvf_windows", "window_start"]

_EPOCH = datetime.datetime(1970, 1, 1)
_HOUR = 3_600_000
_UTC_NAMES = {"UTC", "Etc/UTC", "Etc/UCT", "Etc/GMT", "Etc/Universal", "Etc/Zulu", "GMT", "UCT", "Universal", "Zulu"}


class ShiftTimeZone:
    """The time zone windows are aligned in: UTC (no shift), or the session's zone for a
    TIMESTAMP_LTZ time attribute."""

    def __init__(self, name: str):
        zone = None if name == "UTC" else zone_of(name)
        # A zone that is UTC under another name ("default" on a machine in UTC, "Etc/UTC")
        # shifts nothing: rows skip the conversions.
        always_utc = isinstance(zone, datetime.timezone) and zone.utcoffset(None) == datetime.timedelta(0)
        self.zone = None if always_utc or getattr(zone, "key", None) in _UTC_NAMES else zone
        #: Flink's ``TimeZone.useDaylightTime()``: the zone's offset differs between January
        #: and July this year.
        year = datetime.datetime.now(datetime.UTC).year
        self.daylight_saving = (
            self.zone is not None
            and len({datetime.datetime(year, month, 1, tzinfo=self.zone).utcoffset() for month in (1, 7)}) > 1
        )

    def to_local(self, epoch: int) -> int:
        """The local wall clock's milliseconds at instant ``epoch`` (``toUtcTimestampMills``)."""
        if self.zone is None or epoch == MAX_WATERMARK:
            return epoch
        moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(milliseconds=epoch)
        offset = moment.astimezone(self.zone).utcoffset()
        return epoch if offset is None else epoch + offset // datetime.timedelta(milliseconds=1)

    def _instant(self, local: int) -> int:
        """Java's ``LocalDateTime.atZone``: a time in a gap moves later by the gap, an
        ambiguous one takes the earlier offset (Python's ``fold=0`` does both)."""
        offset = (_EPOCH + datetime.timedelta(milliseconds=local)).replace(tzinfo=self.zone).utcoffset()
        return local if offset is None else local - offset // datetime.timedelta(milliseconds=1)

    def to_epoch(self, local: int) -> int:
        """The instant of local time ``local`` (``toEpochMills``)."""
        if self.zone is None or local == MAX_WATERMARK:
            return local
        return self._instant(local)

    def timer(self, local: int) -> int:
        """The instant a timer for local time ``local`` fires at (``toEpochMillsForTimer``):
        in a zone with daylight saving, a time skipped when it starts fires at the skipped
        hour, a time there twice at the later one."""
        if self.zone is None or local == MAX_WATERMARK:
            return local
        first = self._instant(local)
        if not self.daylight_saving:
            return first
        second = self._instant(local + _HOUR)
        if first == second:
            return first - first % _HOUR
        if second - first > _HOUR:
            return first + _HOUR
        return first


def window_start(timestamp: int, size: int) -> int:
    """The start of the window of ``size`` holding ``timestamp`` (Flink's
    ``TimeWindow.getWindowStartWithOffset`` with offset 0; floor, also before the epoch)."""
    return timestamp - timestamp % size


def tvf_windows(window: WindowSpec, timestamp: int) -> list[tuple[int, int]]:
    """The windows ``(start, end)`` a row at ``timestamp`` belongs to, in the order Flink's
    window assigners list them (HOP: the latest first); with a shift time zone, ``timestamp``
    and the windows are local times."""
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
        self.shift = ShiftTimeZone(window.zone)
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
        """The end of the slice of a row at instant ``timestamp`` (local time, shifted)."""
        if self.shift.zone is not None:
            timestamp = self.shift.to_local(timestamp)
        return timestamp - timestamp % self.slice_size + self.slice_size

    def fired(self, window_end: int, watermark: int) -> bool:
        """Whether the watermark passed the window ending at ``window_end`` (Flink's
        ``isWindowFired``)."""
        return window_end != MAX_WATERMARK and self.shift.timer(window_end - 1) <= watermark

    def timer(self, window_end: int) -> int:
        """When the window ending at ``window_end`` fires."""
        return self.shift.timer(window_end - 1)

    def window_ends(self, timer: int) -> list[int]:
        """The windows whose timers fire at ``timer`` (one, but for hours skipped or repeated
        by daylight saving)."""
        if self.shift.zone is None:
            return [timer + 1]
        local = self.shift.to_local(timer)
        step = self.slice_size
        first = window_start(local - 2 * _HOUR, step) + step
        return [end for end in range(first, local + 2 * _HOUR + step, step) if self.timer(end) == timer]

    def next_trigger(self, watermark: int) -> int:
        """The next watermark that may fire a window (Flink's ``getNextTriggerWatermark``:
        aligned in the shift time zone only when it has daylight saving)."""
        if watermark == MAX_WATERMARK:
            return watermark
        interval = self.interval
        if self.shift.daylight_saving:
            trigger = self.shift.timer(window_start(self.shift.to_local(watermark), interval) + interval - 1)
        else:
            trigger = window_start(watermark, interval) + interval - 1
        return trigger if trigger > watermark else trigger + interval

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
