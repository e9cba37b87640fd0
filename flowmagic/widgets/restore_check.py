"""The restore check in a notebook: the JobGraph coloured by verdict, and the table under it.

Displayed, the view makes two outputs, as the graph widget does
(:mod:`flowmagic.widgets.graph_view`): first the picture and the table as plain HTML (the
drawing an ``<img>`` with a ``data:`` URI, see :mod:`flowmagic.render.pictures`), which a saved
or exported notebook shows as it was, trusted or not, with the check as ``text/plain``; then a
widget with the drawing inline, so that hovering a vertex shows its operators' states, which
hides the pictures of its output area while it is drawn.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets

from flowmagic.graph.job_graph import JobGraph
from flowmagic.render import picture_html, printable, set_titles
from flowmagic.render.layout import dot_to_svg
from flowmagic.render.restore_check import VERDICT_FILLS, restore_check_to_dot
from flowmagic.runtime.continuous.restore_check import RestoreCheck, Verdict

__all__ = ["RestoreCheckView"]

_NO_MATH = "tex2jax_ignore mathjax_ignore"
# While the widget is drawn, the pictures displayed with it are hidden (see the docstring).
_STYLE = """<style>
.jp-OutputArea:has(.flowmagic-restore-live) > .jp-OutputArea-child:has(.flowmagic-restore-check) { display: none; }
.flowmagic-restore-live .flowmagic-restore-svg { overflow: auto; max-height: 640px; width: 100%; }
.flowmagic-restore-live svg { display: block; max-width: none; }
</style>"""


class RestoreCheckView:
    """``%flow check NAME --savepoint DIR``: ``check`` drawn on ``job_graph``, and as a table."""

    def __init__(self, job_graph: JobGraph, check: RestoreCheck):
        self.job_graph = job_graph
        self.check = check

    def svg(self) -> str:
        """The JobGraph with every operator's verdict, as SVG with hover details."""
        verdicts = {
            operator.operator_id: (operator.verdict.value, operator.details())
            for operator in self.check.operators
            if operator.verdict is not Verdict.MISSING
        }
        missing = [
            (operator.operator_id, self._missing_verdict(), operator.details())
            for operator in self.check.of(Verdict.MISSING)
        ]
        dot = restore_check_to_dot(self.job_graph, verdicts, missing)
        return set_titles(dot_to_svg(dot.source), dot.titles)

    def _missing_verdict(self) -> str:
        if self.check.allow_non_restored_state:
            return "missing: dropped (non-restored state allowed)"
        return "missing: needs --allow-non-restored-state"

    def table_html(self) -> str:
        """One row per operator: verdict, name, ID, and its states and what happens to them."""
        rows = []
        for operator in self.check.operators:
            fill = VERDICT_FILLS[operator.verdict.value]
            details = "<br>".join(html.escape(printable(detail)) for detail in operator.details())
            rows.append(
                f'<tr><td style="background:{fill}">{html.escape(operator.verdict.value)}</td>'
                f"<td>{html.escape(printable(operator.label))}</td><td><code>{operator.operator_id}</code></td>"
                f"<td>{details}</td></tr>"
            )
        head = "<tr><th>Verdict</th><th>Operator</th><th>Operator ID</th><th>States and details</th></tr>"
        return f'<table class="flowmagic-restore-table"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'

    def __repr__(self) -> str:
        return self.check.to_text()

    def widget(self) -> ipywidgets.HTML:
        """The live view: the drawing inline (hover shows each vertex's states) and the table."""
        summary = html.escape(printable(self.check.summary()))
        view = ipywidgets.HTML(
            f'{_STYLE}<div class="flowmagic-restore-live {_NO_MATH}"><p><b>{summary}</b></p>'
            f'<div class="flowmagic-restore-svg">{self.svg()}</div>{self.table_html()}</div>'
        )
        view.add_class("flowmagic-restore-widget")
        return view

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)
        # No text fallback: where the widget cannot be drawn, the picture above stands for it.
        display({**self.widget()._repr_mimebundle_(), "text/plain": ""}, raw=True)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        summary = html.escape(printable(self.check.summary()))
        picture = picture_html(self.svg(), f"JobGraph of {self.check.job_name}: {self.check.summary()}")
        view = f"<p><b>{summary}</b></p>{picture}{self.table_html()}"
        return {
            "text/html": f'<div class="flowmagic-restore-check {_NO_MATH}">{view}</div>',
            "text/plain": self.check.to_text(),
        }
