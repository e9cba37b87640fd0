"""The live view of a running job: Flink's web UI in the cell.

It is a display (not a widget) updated in place about twice a second: a progress line, the
JobGraph coloured by vertex state, and per vertex a table of its subtasks (state, attempt,
executor, start, duration, records in/out, records/s) with the vertex's totals. Because it
is plain HTML, the final state stays in the saved notebook as it was last shown.
"""

from __future__ import annotations

import html
import time
from typing import Any

from flowmagic.graph.job_graph import JobGraph
from flowmagic.render import STATE_FILLS, dot_to_svg, job_graph_to_dot, printable, set_titles

__all__ = ["JobView"]

_STYLE = """<style>
.flowmagic-job { font-size: var(--jp-ui-font-size1, 13px); }
.flowmagic-job .progress { font-weight: 600; margin: 4px 0; }
.flowmagic-job table { border-collapse: collapse; margin: 4px 0 10px 0; }
.flowmagic-job th, .flowmagic-job td { padding: 1px 10px 1px 0; text-align: left; white-space: nowrap; }
.flowmagic-job td.n { text-align: right; font-variant-numeric: tabular-nums; }
.flowmagic-job tr.total td { border-top: 1px solid var(--jp-border-color1, #9ca3af); font-weight: 600; }
.flowmagic-job .state { padding: 0 4px; border-radius: 3px; color: #111827; }
.flowmagic-job svg > g > polygon:first-of-type { fill: transparent; }
</style>"""


def _number(value: float) -> str:
    return f"{value:,.0f}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def _clock(timestamp: float | None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(timestamp)) if timestamp else ""


def _state(state: str) -> str:
    fill = STATE_FILLS.get(state, "#f3f4f6")
    return f'<span class="state" style="background:{fill}">{html.escape(state)}</span>'


class JobView:
    """Shows one job's progress; ``update(snapshot)`` redraws it from a monitor snapshot."""

    def __init__(self, job_graph: JobGraph):
        self.job_graph = job_graph
        self.snapshot: dict[str, Any] | None = None
        self._svg_states: dict[str, str] | None = None
        self._svg = ""
        self._handle: Any = None

    def display(self) -> None:
        """Show the view in the current cell (then keep it updated with :meth:`update`)."""
        from IPython.display import display

        self._handle = display(self._bundle(), raw=True, display_id=True)

    def update(self, snapshot: dict[str, Any]) -> None:
        self.snapshot = snapshot
        if self._handle is not None:
            self._handle.update(self._bundle(), raw=True)

    def _bundle(self) -> dict[str, str]:
        return {"text/html": self.to_html(), "text/plain": self.summary()}

    def summary(self) -> str:
        """One deterministic line: the job, its state and how many subtasks finished."""
        snapshot = self.snapshot
        if snapshot is None:
            return f"<Job {self.job_graph.name!r}: CREATED>"
        return (
            f"<Job {snapshot['job']!r}: {snapshot['state']}, "
            f"{snapshot['finished_subtasks']}/{snapshot['total_subtasks']} subtasks finished>"
        )

    def _graph_svg(self, states: dict[str, str]) -> str:
        # Layout costs tens of milliseconds: redraw only when a vertex changed state.
        if states != self._svg_states:
            dot = job_graph_to_dot(self.job_graph, states)
            self._svg = set_titles(dot_to_svg(dot.source), dot.titles)
            self._svg_states = dict(states)
        return self._svg

    def to_html(self) -> str:
        snapshot = self.snapshot
        if snapshot is None:
            return f'<div class="flowmagic-job">{_STYLE}<div class="progress">CREATED</div></div>'
        states = {vertex["id"]: vertex["state"] for vertex in snapshot["vertices"]}
        progress = (
            f"{_state(snapshot['state'])} {snapshot['finished_subtasks']}/{snapshot['total_subtasks']} "
            f"subtasks finished · {_duration(snapshot['elapsed'])}"
        )
        parts = [
            f'<div class="flowmagic-job tex2jax_ignore mathjax_ignore">{_STYLE}',
            f'<div class="progress">Job {html.escape(printable(snapshot["job"]))}: {progress}</div>',
            f"<div>{self._graph_svg(states)}</div>",
        ]
        header = (
            "<tr><th>Subtask</th><th>State</th><th>Attempt</th><th>Executor</th><th>Start</th>"
            "<th>Duration</th><th>Records in</th><th>Records out</th><th>Records/s</th></tr>"
        )
        for vertex in snapshot["vertices"]:
            rows = [header]
            for subtask in vertex["subtasks"]:
                rows.append(
                    "<tr>"
                    f"<td>{html.escape(printable(subtask['name']))}</td><td>{_state(subtask['state'])}</td>"
                    f"<td class='n'>{subtask['attempt']}</td><td>{html.escape(subtask['host'])}</td>"
                    f"<td>{_clock(subtask['start_time'])}</td><td class='n'>{_duration(subtask['duration'])}</td>"
                    f"<td class='n'>{_number(subtask['records_in'])}</td>"
                    f"<td class='n'>{_number(subtask['records_out'])}</td>"
                    f"<td class='n'>{_number(subtask['records_per_second'])}</td>"
                    "</tr>"
                )
            rows.append(
                "<tr class='total'>"
                f"<td>{html.escape(printable(vertex['name']))}</td><td>{_state(vertex['state'])}</td>"
                "<td></td><td></td><td></td><td></td>"
                f"<td class='n'>{_number(vertex['records_in'])}</td>"
                f"<td class='n'>{_number(vertex['records_out'])}</td><td></td>"
                "</tr>"
            )
            parts.append(f"<table>{''.join(rows)}</table>")
        parts.append("</div>")
        return "".join(parts)
