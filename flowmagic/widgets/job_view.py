"""The live view of a running job: Flink's web UI in the cell.

It is a display (not a widget) updated in place about twice a second: a progress line, the
JobGraph coloured by vertex state, or once measured by busy and back-pressured time as Flink's
web UI colours it (see :mod:`flowmagic.runtime.backpressure`), each subtask's load, and per
vertex a table of its subtasks (state, attempt, executor, start, duration, records in/out,
records/s) with the vertex's totals; a continuous job's state and checkpoints. Because it
is plain HTML, the final state stays in the saved notebook as it was last shown; the graph
is an ``<img>`` with a ``data:`` URI, so that it stays a picture where the notebook is not
trusted (JupyterLab's sanitizer turns inline SVG into its bare text).

Records/s is measured by the view, over a sliding window of the counters it was shown
(:class:`RateWindow`), not from one report to the next: counters arrive in steps, and a
subtask that ran for milliseconds has no meaningful rate. Where there is none, it shows ``-``.
"""

from __future__ import annotations

import html
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from flowmagic.graph.job_graph import JobGraph
from flowmagic.graph.physical_graph import ChannelKind, PhysicalGraph
from flowmagic.graph.spark_placement import DIFFERENCE_FROM_FLINK, SparkPlacement, SparkSubtask, place_on_spark
from flowmagic.render import (
    STATE_FILLS,
    dot_to_svg,
    job_graph_to_dot,
    picture_html,
    printable,
    set_titles,
    spark_placement_to_dot,
)
from flowmagic.runtime.backpressure import SubtaskLoad, bounded_load, vertex_percentages
from flowmagic.runtime.metric_reports import (
    CheckpointRecord,
    ContinuousReport,
    JobReport,
    OperatorStateReport,
    SubtaskReport,
    VertexReport,
)
from flowmagic.runtime.records import MIN_WATERMARK
from flowmagic.widgets.event_time import event_time_html

__all__ = [
    "RATE_SPAN",
    "RATE_WINDOW",
    "SPARK_REDRAW",
    "JobView",
    "RateWindow",
    "SparkPicture",
    "job_load",
    "spark_placement",
]

#: Seconds of counter samples a running subtask's Records/s is measured over.
RATE_WINDOW = 5.0
#: The least time, in seconds, a rate is measured over: below it (samples too close, or a
#: subtask that ran for less), Records/s shows "-".
RATE_SPAN = 1.0
_TERMINAL = ("FINISHED", "CANCELED", "FAILED")

_STYLE = """<style>
.flowmagic-job { font-size: var(--jp-ui-font-size1, 13px); }
.flowmagic-job .progress { font-weight: 600; margin: 4px 0; }
.flowmagic-job .missing { color: var(--jp-warn-color0, #b45309); margin: 4px 0; }
.flowmagic-job table { border-collapse: collapse; margin: 4px 0 10px 0; }
.flowmagic-job th, .flowmagic-job td { padding: 1px 10px 1px 0; text-align: left; white-space: nowrap; }
.flowmagic-job td.n { text-align: right; font-variant-numeric: tabular-nums; }
.flowmagic-job tr.total td { border-top: 1px solid var(--jp-border-color1, #9ca3af); font-weight: 600; }
.flowmagic-job .state { padding: 0 4px; border-radius: 3px; color: #111827; }
</style>"""


#: What a counter shows when no report of its subtask reached the notebook.
_UNKNOWN = "&ndash;"


def _number(value: float) -> str:
    return f"{value:,.0f}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def _rate(value: float | None) -> str:
    return "-" if value is None else _number(value)


def _clock(timestamp: float | None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(timestamp)) if timestamp else ""


def _missing_metrics(snapshot: JobReport) -> str:
    """Why some counters are unknown, once the job ended; empty when all subtasks reported."""
    if snapshot.state not in ("FINISHED", "FAILED", "CANCELED"):
        return ""
    address, total = snapshot.metrics_address, snapshot.total_subtasks
    missing = total - snapshot.reported_subtasks
    if missing == 0:
        return ""
    if address is None:
        return "live metrics were off for this run: record counts unknown"
    which = "any subtask" if missing == total else f"{missing} of {total} subtasks"
    return (
        f"live metrics unavailable: no report of {which} reached the notebook at {address} "
        "(can the executors reach the driver's address?); their record counts are unknown"
    )


def _metric_value(value: Any) -> str:
    if isinstance(value, dict):
        return " · ".join(f"{html.escape(str(name))} {_metric_value(part)}" for name, part in value.items())
    if isinstance(value, bool) or value is None:
        return html.escape(str(value))
    if isinstance(value, int):
        return _number(value)
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else _number(round(value))
    return html.escape(printable(str(value)))


def _user_metrics_html(vertex: VertexReport) -> str:
    """The user metrics (``get_metrics_group()``) of a vertex's subtasks: one row per subtask,
    one column per metric; nothing when its operators registered none."""
    names = sorted({name for subtask in vertex.subtasks for name in subtask.metrics})
    if not names:
        return ""
    header = "<tr><th>Subtask</th>" + "".join(f"<th>{html.escape(printable(name))}</th>" for name in names) + "</tr>"
    rows = [header]
    for subtask in vertex.subtasks:
        metrics = subtask.metrics
        cells = "".join(
            f"<td class='n'>{_metric_value(metrics[name]) if name in metrics else _UNKNOWN}</td>" for name in names
        )
        rows.append(f"<tr><td>{html.escape(printable(subtask.name))}</td>{cells}</tr>")
    return f"<table class='user-metrics'>{''.join(rows)}</table>"


def _state(state: str) -> str:
    fill = STATE_FILLS.get(state, "#f3f4f6")
    return f'<span class="state" style="background:{fill}">{html.escape(state)}</span>'


def _bytes(size: int | None) -> str:
    if size is None:
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return "-"


def job_load(snapshot: JobReport) -> dict[tuple[str, int], SubtaskLoad]:
    """Each measured subtask's busy, idle and back-pressured time per second: a continuous
    job's over its last epoch, a bounded job's over its run (see
    :mod:`flowmagic.runtime.backpressure`)."""
    continuous = snapshot.continuous
    if continuous is None:
        return bounded_load(snapshot)
    return {
        (vertex_id, index): SubtaskLoad(*figures)
        for vertex_id, subtasks in continuous.load.items()
        for index, figures in enumerate(subtasks)
        if figures is not None
    }


def _load_html(vertices: list[VertexReport], load: dict[tuple[str, int], SubtaskLoad]) -> str:
    """Per subtask: its watermark, and its busy, idle and back-pressured time per second
    (Flink's BackPressure tab)."""
    rows = [
        "<tr><th>Subtask</th><th>Watermark</th><th>Busy (ms/s)</th><th>Idle (ms/s)</th>"
        "<th>Back-pressured (ms/s)</th></tr>"
    ]
    for vertex in vertices:
        for subtask in vertex.subtasks:
            watermark = subtask.watermark
            shown = "-" if watermark is None or watermark <= MIN_WATERMARK else _number(watermark)
            figures = load.get((vertex.id, subtask.subtask))
            cells = (
                ["-"] * 3
                if figures is None
                else [f"{figures.busy:.0f}", f"{figures.idle:.0f}", f"{figures.backpressured:.0f}"]
            )
            rows.append(
                f"<tr><td>{html.escape(printable(subtask.name))}</td><td class='n'>{shown}</td>"
                + "".join(f"<td class='n'>{cell}</td>" for cell in cells)
                + "</tr>"
            )
    return f"<table class='load'>{''.join(rows)}</table>"


def _history_html(history: list[CheckpointRecord]) -> str:
    """The latest checkpoints, newest first (the History of Flink's Checkpoints tab)."""
    if not history:
        return ""
    rows = [
        "<tr><th>ID</th><th>Status</th><th>Epoch</th><th>Completed</th><th>End to End Duration</th>"
        "<th>Checkpointed Data Size</th><th>Full Checkpoint Data Size</th></tr>"
    ]
    for record in reversed(history):
        rows.append(
            f"<tr><td class='n'>{record.id}</td><td>COMPLETED</td><td class='n'>{_number(record.epoch)}</td>"
            f"<td>{_clock(record.completed_at)}</td><td class='n'>{_duration(record.duration_ms / 1000)}</td>"
            f"<td class='n'>{_bytes(record.checkpointed_bytes)}</td><td class='n'>{_bytes(record.full_bytes)}</td></tr>"
        )
    return f"<div class='progress'>Checkpoints history</div><table class='checkpoints'>{''.join(rows)}</table>"


def _state_html(state: list[OperatorStateReport]) -> str:
    """Per stateful operator and subtask: its keys, pending timers and last snapshot's size."""
    if not state:
        return ""
    rows = [
        "<tr><th>Operator</th><th>Subtask</th><th>Operator ID</th><th>Keys</th><th>Timers pending</th>"
        "<th>Last snapshot</th></tr>"
    ]
    for entry in state:
        written = f"{_bytes(entry.snapshot_bytes)} ({'whole' if entry.whole else 'changed keys'})"
        rows.append(
            f"<tr><td>{html.escape(printable(entry.operator))}</td><td class='n'>{entry.subtask}</td>"
            f"<td>{entry.operator_id}</td><td class='n'>{_number(entry.keys)}</td>"
            f"<td class='n'>{_number(entry.timers)}</td><td class='n'>{written}</td></tr>"
        )
    return f"<div class='progress'>State</div><table class='state-sizes'>{''.join(rows)}</table>"


def _continuous_html(continuous: ContinuousReport) -> str:
    """A continuous job's epochs and checkpoints (Flink's Checkpoints tab) and its newest
    output."""
    checkpoints = continuous.checkpoints
    last = checkpoints.last_duration_ms
    rows = [
        "<tr><th>Epochs</th><th>Restarts</th><th>Checkpoints completed</th><th>Last checkpoint</th><th>Duration</th>"
        "<th>State size</th><th>Last savepoint</th></tr>",
        "<tr>"
        f"<td class='n'>{_number(continuous.epochs)}</td><td class='n'>{_number(continuous.restarts)}</td>"
        f"<td class='n'>{_number(checkpoints.completed)}</td>"
        f"<td>{_clock(checkpoints.last_completed_at)}</td>"
        f"<td class='n'>{'-' if last is None else _duration(last / 1000)}</td>"
        f"<td class='n'>{_bytes(checkpoints.last_size_bytes)}</td>"
        f"<td>{html.escape(printable(checkpoints.last_savepoint or '-'))}</td>"
        "</tr>",
    ]
    parts = [f"<table>{''.join(rows)}</table>", _history_html(checkpoints.history), _state_html(continuous.state)]
    files = continuous.files
    if files is not None:
        parts.append(
            f"<div class='progress'>FileSink: {files.committed:,} part files committed, "
            f"{files.pending:,} rolled and waiting for the next checkpoint</div>"
        )
    if continuous.error:
        parts.append(f'<pre class="missing">{html.escape(printable(continuous.error))}</pre>')
    elif continuous.last_failure:
        # Flink's Exceptions tab: what the job last restarted after.
        parts.append(
            f"<div class='progress'>Restarted after (restart {continuous.restarts}, "
            f"{html.escape(continuous.restart_strategy)}):</div>"
            f'<pre class="missing">{html.escape(printable(continuous.last_failure))}</pre>'
        )
    total, tail = continuous.printed_total, continuous.printed_tail
    if total:
        shown = f"the last {len(tail)} of {total:,} printed lines" if total > len(tail) else f"{total:,} printed lines"
        lines = html.escape("\n".join(printable(line) for line in tail))
        parts.append(f'<div class="progress">Output: {shown}</div><pre class="output">{lines}</pre>')
    return "".join(parts)


# -- The physical graph as it ran on Spark ------------------------------------------------

#: Seconds between redraws of the Spark picture while only its record counts change.
SPARK_REDRAW = 2.0


def spark_placement(physical_graph: PhysicalGraph, snapshot: JobReport) -> SparkPlacement | None:
    """Where ``snapshot``'s subtasks ran on Spark, on ``physical_graph``; None when none ran
    as a Spark task (a local run, or none reported yet)."""
    subtasks = []
    for vertex in snapshot.vertices:
        for subtask in vertex.subtasks:
            if subtask.task is None:
                continue
            channels: dict[tuple[str, int], int] = {}
            for key, count in subtask.channels.items():
                consumer, _, index = key.rpartition("/")
                channels[(consumer, int(index))] = count
            subtasks.append(
                SparkSubtask(
                    vertex.id,
                    subtask.subtask,
                    subtask.attempt,
                    executor=subtask.executor,
                    process=subtask.host or None,
                    stage=subtask.stage,
                    task=subtask.task,
                    channels=channels,
                )
            )
    return place_on_spark(physical_graph, subtasks) if subtasks else None


def _exchanges_html(placement: SparkPlacement) -> str:
    """Per exchange: its channels on the Flink cluster and on Spark, and the records they carried."""
    graph = placement.graph
    totals: dict[tuple[str, str, str], list[int]] = {}
    for channel in placement.channels:
        row = totals.setdefault((channel.producer[0], channel.consumer[0], channel.ship_strategy), [0] * 7)
        row[0 if channel.flink is ChannelKind.LOCAL else 1] += 1
        if channel.spark is ChannelKind.LOCAL:
            row[2] += 1
        elif channel.crosses_executor:
            row[4] += 1
        elif channel.spark is ChannelKind.REMOTE:
            row[3] += 1
        else:
            row[5] += 1
        row[6] += channel.records or 0
    rows = [
        "<tr><th>Exchange</th><th>Flink local</th><th>Flink remote</th><th>Spark same process</th>"
        "<th>Spark other process</th><th>Spark other executor</th><th>Not placed yet</th><th>Records</th></tr>"
    ]
    for (source, target, strategy), row in totals.items():
        name = f"{graph.vertex_names[source]} -> {graph.vertex_names[target]} ({strategy})"
        rows.append(
            f"<tr><td>{html.escape(printable(name))}</td>"
            + "".join(f"<td class='n'>{_number(count)}</td>" for count in row)
            + "</tr>"
        )
    return f"<table class='spark-exchanges'>{''.join(rows)}</table>"


class SparkPicture:
    """The physical graph as it ran on Spark, redrawn when a subtask ran in another process, and
    at most every :data:`SPARK_REDRAW` seconds while only its Spark tasks or record counts
    change (layout costs tens of milliseconds)."""

    def __init__(self, physical_graph: PhysicalGraph):
        self.physical_graph = physical_graph
        self.placement: SparkPlacement | None = None
        self._drawn: tuple[Any, ...] | None = None
        self._drawn_at = 0.0
        self._html = ""

    def html(self, snapshot: JobReport, now: float) -> str:
        placement = spark_placement(self.physical_graph, snapshot)
        self.placement = placement
        if placement is None:
            return ""
        # A continuous job's subtasks are new Spark tasks every epoch: those, like record
        # counts, are redrawn every SPARK_REDRAW seconds; a subtask changing process at once.
        where = tuple((key, s.executor, s.process) for key, s in placement.subtasks.items())
        shown = (tuple(s.task for s in placement.subtasks.values()), tuple(c.records for c in placement.channels))
        ended = snapshot.state in _TERMINAL
        if (
            self._drawn is None
            or self._drawn[0] != where
            or (self._drawn[1] != shown and (ended or now - self._drawn_at >= SPARK_REDRAW))
        ):
            dot = spark_placement_to_dot(placement)
            svg = set_titles(dot_to_svg(dot.source), dot.titles)
            title = f"Physical graph of {self.physical_graph.job_name} as it ran on Spark"
            self._html = picture_html(svg, printable(title))
            self._drawn, self._drawn_at = (where, shown), now
        counts = placement.channel_counts()
        executors = placement.executors
        summary = (
            f"Physical graph on Spark: {len(placement.subtasks)} of {len(self.physical_graph.tasks)} subtasks placed "
            f"on {len(executors)} executor{'' if len(executors) == 1 else 's'} "
            f"({html.escape(printable(', '.join(executors) or '-'))}); of {len(placement.channels):,} channels, "
            f"{counts['LOCAL']:,} stayed in one process, {counts['REMOTE']:,} crossed processes "
            f"({counts['CROSS_EXECUTOR']:,} crossed executors)."
        )
        return (
            f"<div class='spark-physical'><div class='progress'>{summary}</div>"
            f"<div class='note'>{html.escape(DIFFERENCE_FROM_FLINK)} Channels are coloured by the records "
            f"each producer subtask handed each consumer subtask.</div>"
            f"<div>{self._html}</div>{_exchanges_html(placement)}</div>"
        )


class RateWindow:
    """Records per second of each subtask, from the counters of successive snapshots.

    A subtask's count is the larger of its records in and out (a source reads none). While
    it runs, its rate is the count's growth over the samples of the last :data:`RATE_WINDOW`
    seconds, once they span :data:`RATE_SPAN`; when it ended, its count over its duration,
    if it ran that long. Otherwise there is no rate (``None``).
    """

    def __init__(self) -> None:
        self._samples: dict[tuple[str, int], deque[tuple[float, int]]] = {}
        self._attempts: dict[tuple[str, int], int] = {}

    def add(self, snapshot: JobReport, now: float) -> None:
        """Record the counters of ``snapshot``, taken at ``now`` (seconds, monotonic)."""
        for vertex in snapshot.vertices:
            for subtask in vertex.subtasks:
                key = (vertex.id, subtask.subtask)
                if self._attempts.get(key) != subtask.attempt:
                    # A new attempt counts from zero again.
                    self._attempts[key] = subtask.attempt
                    self._samples[key] = deque()
                samples = self._samples[key]
                samples.append((now, max(subtask.records_in, subtask.records_out)))
                while len(samples) > 2 and now - samples[1][0] >= RATE_WINDOW:
                    samples.popleft()

    def rate(self, vertex_id: str, subtask: SubtaskReport) -> float | None:
        """Records/s of ``subtask`` (an entry of a snapshot vertex's ``subtasks``), or None."""
        count = max(subtask.records_in, subtask.records_out)
        if subtask.state in _TERMINAL:
            duration = subtask.duration
            return count / duration if duration is not None and duration >= RATE_SPAN else None
        if subtask.state != "RUNNING":
            return None
        samples = self._samples.get((vertex_id, subtask.subtask))
        if not samples:
            return None
        (first_time, first_count), (last_time, last_count) = samples[0], samples[-1]
        span = last_time - first_time
        return (last_count - first_count) / span if span >= RATE_SPAN else None


class JobView:
    """Shows one job's progress; ``update(snapshot)`` redraws it from a monitor snapshot."""

    def __init__(
        self,
        job_graph: JobGraph,
        physical_graph: PhysicalGraph | None = None,
        plan_nodes: Mapping[str, Sequence[str]] | None = None,
    ):
        self.job_graph = job_graph
        #: A SQL job's plan nodes (their Optimized Execution Plan lines) each vertex runs, by vertex id.
        self.plan_nodes = dict(plan_nodes or {})
        self.snapshot: JobReport | None = None
        self.rates = RateWindow()
        #: The physical graph as it runs on Spark (none without a physical graph).
        self.spark = SparkPicture(physical_graph) if physical_graph is not None else None
        self._now = 0.0
        self._svg_states: dict[str, str] | None = None
        self._svg_load: dict[str, tuple[int, int]] = {}
        self._svg_at = 0.0
        self._svg = ""
        self._handle: Any = None

    def display(self) -> None:
        """Show the view in the current cell (then keep it updated with :meth:`update`)."""
        from IPython.display import display

        self._handle = display(self._bundle(), raw=True, display_id=True)

    def update(self, snapshot: JobReport, now: float | None = None) -> None:
        """Show ``snapshot``, taken at ``now`` (``time.monotonic()`` if not given)."""
        self.snapshot = snapshot
        self._now = time.monotonic() if now is None else now
        self.rates.add(snapshot, self._now)
        if self._handle is not None:
            self._handle.update(self._bundle(), raw=True)

    def _bundle(self) -> dict[str, str]:
        return {"text/html": self.to_html(), "text/plain": self.summary()}

    def summary(self) -> str:
        """One deterministic line: the job, its state and how many subtasks finished."""
        snapshot = self.snapshot
        if snapshot is None:
            return f"<Job {self.job_graph.name!r}: CREATED>"
        missing = _missing_metrics(snapshot)
        return (
            f"<Job {snapshot.job!r}: {snapshot.state}, "
            f"{snapshot.finished_subtasks}/{snapshot.total_subtasks} subtasks finished"
            + (f"; {missing}>" if missing else ">")
        )

    def _graph_picture(self, states: dict[str, str], load: dict[str, tuple[float, float]], ended: bool) -> str:
        # Layout costs tens of milliseconds: redraw when a vertex changed state, and at most
        # every SPARK_REDRAW seconds while only its load changes (and once it ended).
        shown = {vertex: (round(busy), round(pressured)) for vertex, (busy, pressured) in load.items()}
        if states != self._svg_states or (
            shown != self._svg_load and (ended or self._now - self._svg_at >= SPARK_REDRAW)
        ):
            dot = job_graph_to_dot(self.job_graph, states, shown)
            svg = set_titles(dot_to_svg(dot.source), dot.titles)
            title = f"JobGraph of {self.job_graph.name}, coloured by vertex state, busy and back-pressured time"
            self._svg = picture_html(svg, printable(title))
            self._svg_states, self._svg_load, self._svg_at = dict(states), shown, self._now
        return self._svg

    def to_html(self) -> str:
        snapshot = self.snapshot
        if snapshot is None:
            return f'<div class="flowmagic-job">{_STYLE}<div class="progress">CREATED</div></div>'
        states = {vertex.id: vertex.state for vertex in snapshot.vertices}
        names = {vertex.id: vertex.name for vertex in snapshot.vertices}
        progress = (
            f"{_state(snapshot.state)} {snapshot.finished_subtasks}/{snapshot.total_subtasks} "
            f"subtasks finished · {_duration(snapshot.elapsed)}"
        )
        parts = [
            f'<div class="flowmagic-job tex2jax_ignore mathjax_ignore">{_STYLE}',
            f'<div class="progress">Job {html.escape(printable(snapshot.job))}: {progress}</div>',
        ]
        missing = _missing_metrics(snapshot)
        if missing:
            parts.append(f'<div class="missing">{html.escape(missing[0].upper() + missing[1:])}.</div>')
        load = job_load(snapshot)
        percentages = {
            vertex.id: figures
            for vertex in snapshot.vertices
            if (figures := vertex_percentages(load.get((vertex.id, s.subtask)) for s in vertex.subtasks)) is not None
        }
        parts.append(f"<div>{self._graph_picture(states, percentages, snapshot.state in _TERMINAL)}</div>")
        if load:
            parts.append(_load_html(snapshot.vertices, load))
        header = (
            "<tr><th>Subtask</th><th>State</th><th>Attempt</th><th>Executor</th><th>Start</th>"
            "<th>Duration</th><th>Records in</th><th>Records out</th><th>Records/s</th></tr>"
        )
        for vertex in snapshot.vertices:
            runs = self.plan_nodes.get(vertex.id)
            if runs:
                parts.append(
                    f"<div class='plan-nodes'>{html.escape(printable(vertex.name))} runs "
                    + " &rarr; ".join(f"<code>{html.escape(printable(line))}</code>" for line in runs)
                    + "</div>"
                )
            rows = [header]
            for subtask in vertex.subtasks:
                counted = not missing or subtask.reported
                counts = (
                    [
                        _number(subtask.records_in),
                        _number(subtask.records_out),
                        _rate(self.rates.rate(vertex.id, subtask)),
                    ]
                    if counted
                    else [_UNKNOWN] * 3
                )
                rows.append(
                    "<tr>"
                    f"<td>{html.escape(printable(subtask.name))}</td><td>{_state(subtask.state)}</td>"
                    f"<td class='n'>{subtask.attempt}</td><td>{html.escape(subtask.host)}</td>"
                    f"<td>{_clock(subtask.start_time)}</td><td class='n'>{_duration(subtask.duration)}</td>"
                    + "".join(f"<td class='n'>{count}</td>" for count in counts)
                    + "</tr>"
                )
            complete = not missing or all(subtask.reported for subtask in vertex.subtasks)
            totals = [_number(vertex.records_in), _number(vertex.records_out)] if complete else [_UNKNOWN] * 2
            rows.append(
                "<tr class='total'>"
                f"<td>{html.escape(printable(vertex.name))}</td><td>{_state(vertex.state)}</td>"
                "<td></td><td></td><td></td><td></td>"
                + "".join(f"<td class='n'>{total}</td>" for total in totals)
                + "<td></td></tr>"
            )
            parts.append(f"<table>{''.join(rows)}</table>")
            parts.append(_user_metrics_html(vertex))
            parts.append(event_time_html(vertex, names, time.time()))
        continuous = snapshot.continuous
        if continuous is not None:
            parts.append(_continuous_html(continuous))
        if self.spark is not None:
            parts.append(self.spark.html(snapshot, self._now))
        parts.append("</div>")
        return "".join(parts)
