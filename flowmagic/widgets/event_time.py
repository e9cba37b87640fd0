"""Why a window has not fired: each subtask's place in event time, in the job view.

Per subtask of a vertex that reads input channels: its watermark, every channel's watermark
(idle channels marked, as Flink's ``WatermarkStatus`` has them), and for a window operator
its earliest pending window with the watermark it waits for and the channel holding that
watermark back, in one sentence:

    window [10:00:00, 10:00:05) of key 'k' fires when the watermark passes 10:00:04.999; it
    is at 10:00:02.100, held back by channel 1 of subtask 1 (Source, idle for 12 s)
"""

from __future__ import annotations

import datetime
import html

from flowmagic.render import printable
from flowmagic.runtime.metric_reports import ChannelWatermark, EventTimeReport, VertexReport
from flowmagic.runtime.records import MAX_WATERMARK, MIN_WATERMARK

__all__ = ["event_time_html", "event_time_text", "instant", "pending_sentence"]


def instant(millis: int) -> str:
    """An event time as a time of day (UTC), with milliseconds when it has any; the date too
    when it is not the first day of the epoch. The watermark's extremes are named."""
    if millis <= MIN_WATERMARK:
        return "none yet"
    if millis >= MAX_WATERMARK:
        return "the end of time"
    moment = datetime.datetime.fromtimestamp(millis / 1000, datetime.UTC)
    shown = moment.strftime("%H:%M:%S") + (f".{millis % 1000:03d}" if millis % 1000 else "")
    return shown if moment.date() == datetime.date(1970, 1, 1) else f"{moment.date().isoformat()} {shown}"


def _numbered(report: EventTimeReport) -> list[tuple[int, ChannelWatermark]]:
    """Each channel with its index within its input gate (Flink's channel index)."""
    seen: dict[int, int] = {}
    numbered = []
    for channel in report.channels:
        index = seen.get(channel.input, 0)
        seen[channel.input] = index + 1
        numbered.append((index, channel))
    return numbered


def _seconds(since: float, now: float) -> str:
    return f"{max(now - since, 0.0):.0f} s"


def pending_sentence(report: EventTimeReport, watermark: int | None, names: dict[str, str], now: float) -> str | None:
    """The earliest pending window, the watermark it waits for and what holds that back; None
    when no window is pending. ``names`` gives vertex names by id, ``now`` the wall clock."""
    pending = report.pending
    if pending is None:
        return None
    if pending.start is None or pending.end is None:
        what = f"the window of key {pending.key}"
    else:
        what = f"window [{instant(pending.start)}, {instant(pending.end)}) of key {pending.key}"
    current = MIN_WATERMARK if watermark is None else watermark
    where = f"it is at {instant(current)}" if current > MIN_WATERMARK else "it has none yet"
    sentence = f"{what} fires when the watermark passes {instant(pending.fires_at)}; {where}"
    # The channel the subtask's watermark waits for: the least among those still counted.
    counted = [(index, channel) for index, channel in _numbered(report) if not channel.idle]
    if counted and current < pending.fires_at:
        index, channel = min(counted, key=lambda numbered: numbered[1].watermark)
        producer = printable(names.get(channel.producer, channel.producer))
        sentence += (
            f", held back by channel {index} of subtask {channel.producer_subtask} "
            f"({producer}, idle for {_seconds(channel.since, now)})"
        )
    return sentence


def event_time_text(vertex: VertexReport, names: dict[str, str], now: float) -> list[str]:
    """Per subtask of ``vertex`` with a pending window: its name and the sentence."""
    lines = []
    for subtask in vertex.subtasks:
        report = subtask.event_time
        sentence = None if report is None else pending_sentence(report, subtask.watermark, names, now)
        if sentence is not None:
            lines.append(f"{subtask.name}: {sentence}")
    return lines


def event_time_html(vertex: VertexReport, names: dict[str, str], now: float) -> str:
    """A table of ``vertex``'s subtasks in event time; nothing when none reads channels."""
    reported = [(subtask, subtask.event_time) for subtask in vertex.subtasks if subtask.event_time is not None]
    if not any(report.channels or report.pending for _subtask, report in reported):
        return ""
    rows = ["<tr><th>Subtask</th><th>Watermark</th><th>Input channels</th><th>Earliest pending window</th></tr>"]
    for subtask, report in reported:
        channels = "<br>".join(
            f"channel {index} of subtask {channel.producer_subtask} "
            f"({html.escape(printable(names.get(channel.producer, channel.producer)))}) at {instant(channel.watermark)}"
            + (f" <b class='idle'>idle</b> for {_seconds(channel.since, now)}" if channel.idle else "")
            for index, channel in _numbered(report)
        )
        sentence = pending_sentence(report, subtask.watermark, names, now)
        watermark = MIN_WATERMARK if subtask.watermark is None else subtask.watermark
        rows.append(
            f"<tr><td>{html.escape(printable(subtask.name))}</td><td class='n'>{instant(watermark)}</td>"
            f"<td>{channels or '-'}</td><td class='pending'>{html.escape(sentence or '-')}</td></tr>"
        )
    return f"<table class='event-time'>{''.join(rows)}</table>"
