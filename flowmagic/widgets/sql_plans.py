"""The plans of a SQL statement as the notebook shows them: Flink's three EXPLAIN plans as
text, each line of the Optimized Execution Plan telling (on hover, in its ``title``) which
operator and JobGraph vertex its ExecNode became; then why the statement retracts."""

from __future__ import annotations

import html
from dataclasses import dataclass

from flowmagic.sql.retraction import Retraction

__all__ = ["PlanLink", "SqlPlans", "retraction_html"]

_STYLE = """<style>
.flowmagic-sqlplans pre { font-size: var(--jp-code-font-size, 12px); margin: 2px 0 10px 0; overflow-x: auto; }
.flowmagic-sqlplans span.flowmagic-plan-node { cursor: help; border-bottom: 1px dotted currentColor; }
.flowmagic-sqlplans span.flowmagic-plan-node:hover { background: var(--jp-layout-color2, #eef2ff); }
.flowmagic-retraction code { white-space: pre-wrap; }
</style>"""


@dataclass(frozen=True)
class PlanLink:
    """Which operators and JobGraph vertices an ExecNode of the plan became."""

    exec_node_id: int
    description: str
    #: (StreamGraph node id, operator name) of each operator it became.
    operators: tuple[tuple[int, str], ...]
    #: The names of the JobGraph vertices those operators run in.
    vertices: tuple[str, ...]

    def text(self) -> str:
        """The hover text: ``ExecNode [3] became GroupAggregate[3] (StreamGraph node 3) ...``."""
        operators = ", ".join(f"{name} (StreamGraph node {node_id})" for node_id, name in self.operators)
        vertices = ", ".join(f"'{name}'" for name in self.vertices)
        return f"ExecNode [{self.exec_node_id}] became {operators}, in JobGraph vertex {vertices}"


class SqlPlans:
    """The EXPLAIN text of one statement, drawn as HTML with links on the execution plan."""

    def __init__(
        self,
        name: str,
        explain_text: str,
        plan_lines: list[tuple[str, PlanLink | None]],
        retraction: Retraction | None = None,
    ):
        self.name = name
        self.explain_text = explain_text
        self.plan_lines = plan_lines
        #: Why the statement retracts, shown under the plans.
        self.retraction = retraction

    def html(self) -> str:
        """The three plans; the Optimized Execution Plan's lines carry their links as titles."""
        sections = self.explain_text.split("== Optimized Execution Plan ==\n", 1)[0].strip().split("\n\n")
        parts = []
        for section in sections:
            title, _, body = section.partition("\n")
            parts.append(f"<p><b>{html.escape(title.strip('= '))}</b></p><pre>{html.escape(body)}</pre>")
        lines = []
        for line, link in self.plan_lines:
            if link is None:
                lines.append(html.escape(line))
                continue
            lines.append(
                f'<span class="flowmagic-plan-node" title="{html.escape(link.text())}">{html.escape(line)}</span>'
            )
        parts.append("<p><b>Optimized Execution Plan</b></p><pre>" + "\n".join(lines) + "</pre>")
        if self.retraction is not None:
            parts.append(retraction_html(self.retraction))
        return f'{_STYLE}<div class="flowmagic-sqlplans tex2jax_ignore mathjax_ignore">{"".join(parts)}</div>'


def retraction_html(why: Retraction) -> str:
    """Why the statement retracts, as HTML: the origins' plan lines in code, the rewrites as a list."""
    parts = [
        '<div class="flowmagic-retraction tex2jax_ignore mathjax_ignore">',
        "<p><b>Why does this query retract?</b></p>",
        f"<p>{html.escape(why.summary())}</p>",
    ]
    if why.streaming and why.retracts:
        for origin in (*why.origins, *why.later):
            parts.append(
                f"<p><b>{html.escape(origin.operator)}</b> emits {html.escape(', '.join(origin.kinds))}: "
                f"<code>{html.escape(origin.description)}</code><br>{html.escape(origin.reason)}</p>"
            )
        if why.carried_by:
            parts.append(f"<p>Carried to the sink by: {html.escape(', '.join(why.carried_by))}.</p>")
    parts.append(
        f"<p>The sink, {html.escape(why.sink.name)}, {html.escape(why.sink.wording)} "
        f"({html.escape(', '.join(why.sink.accepts))}).</p>"
    )
    if why.sink_refuses:
        parts.append(f"<p><b>{html.escape(why.refusal())}</b></p>")
    if why.rewrites:
        items = "".join(f"<li>{html.escape(rewrite)}</li>" for rewrite in why.rewrites)
        parts.append(f"<p>To get inserts only:</p><ul>{items}</ul>")
    parts.append("</div>")
    return "".join(parts)
