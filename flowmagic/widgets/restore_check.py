"""The restore check in a notebook: the JobGraph coloured by verdict, and the table under it.

Both are plain HTML (the drawing an ``<img>`` with a ``data:`` URI, see
:mod:`flowmagic.render.pictures`), so a saved or exported notebook shows them as they were,
trusted or not; ``text/plain`` is the check as text.
"""

from __future__ import annotations

import html
from typing import Any

from flowmagic.graph.job_graph import JobGraph
from flowmagic.render import picture_html, printable, set_titles
from flowmagic.render.layout import dot_to_svg
from flowmagic.render.restore_check import VERDICT_FILLS, restore_check_to_dot
from flowmagic.runtime.continuous.restore_check import RestoreCheck, Verdict

__all__ = ["RestoreCheckView"]

_NO_MATH = "tex2jax_ignore mathjax_ignore"


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

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        summary = html.escape(printable(self.check.summary()))
        picture = picture_html(self.svg(), f"JobGraph of {self.check.job_name}: {self.check.summary()}")
        view = f"<p><b>{summary}</b></p>{picture}{self.table_html()}"
        return {
            "text/html": f'<div class="flowmagic-restore-check {_NO_MATH}">{view}</div>',
            "text/plain": self.check.to_text(),
        }
