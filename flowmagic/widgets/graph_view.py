"""The graph widget: one tab per graph level, each with its drawing and a node selector.

The drawings are Graphviz SVG placed inline, so hovering an element shows its ``<title>``
(the node's details) without any script. Under each drawing a drop-down lists the nodes and
shows the selected one's details, so they are reachable without a mouse too.

Displayed by a kernel, :class:`FlowGraphs` shows the widget; the notebook also saves a
static ``image/svg+xml`` copy of the selected level (for GitHub, nbviewer and a notebook
reopened without its kernel) and a deterministic ``text/plain`` line, which nbval compares.
No JavaScript is shipped: the widget is built from ipywidgets' own controls.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets

from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.graph.job_graph import JobGraph
from flowmagic.graph.stream_graph import StreamGraph
from flowmagic.render import NodeDetails, graph_details, printable, to_svg

__all__ = ["LEVELS", "FlowGraphs"]

#: Level name -> tab title, in tab order.
LEVELS = {"stream": "StreamGraph", "job": "JobGraph", "execution": "ExecutionGraph"}

# Graphviz paints for a white page; in a notebook the drawing follows the JupyterLab theme
# (dark included): transparent background, and edges, edge labels and boxes in theme colours.
# Nodes keep their light fills and dark text, legible on any theme. Class names are scoped.
_STYLE = """<style>
.flowmagic-svg { overflow: auto; max-height: 640px; }
.flowmagic-svg svg > g > polygon:first-of-type { fill: transparent; }
.flowmagic-svg g.edge path, .flowmagic-svg g.edge polygon { stroke: var(--jp-ui-font-color2, #4b5563); }
.flowmagic-svg g.edge polygon { fill: var(--jp-ui-font-color2, #4b5563); }
.flowmagic-svg g.edge text, .flowmagic-svg g.cluster text { fill: var(--jp-ui-font-color1, #374151); }
.flowmagic-svg g.cluster path, .flowmagic-svg g.cluster polygon {
  fill: var(--jp-layout-color2, #f3f4f6); stroke: var(--jp-border-color1, #9ca3af);
}
.flowmagic-details table { border-collapse: collapse; font-size: var(--jp-ui-font-size1, 13px); }
.flowmagic-details th { text-align: left; padding: 1px 12px 1px 0; vertical-align: top; white-space: nowrap; }
.flowmagic-details td { padding: 1px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
</style>"""
# MathJax would typeset "$...$" in operator names: these classes make it leave them alone.
_NO_MATH = "tex2jax_ignore mathjax_ignore"


def details_html(item: NodeDetails) -> str:
    """The rows of one node as an HTML table; every value is escaped."""
    rows = "".join(
        f"<tr><th>{html.escape(name)}</th><td>{html.escape(printable(value))}</td></tr>" for name, value in item.rows
    )
    return f'<div class="flowmagic-details {_NO_MATH}"><table>{rows}</table></div>'


class FlowGraphs:
    """The drawings of one pipeline's graphs.

    ``levels`` picks the tabs (of ``"stream"``, ``"job"``, ``"execution"``) and ``selected``
    the one shown first (default: the JobGraph, what Flink's web UI draws).
    """

    def __init__(
        self,
        name: str,
        stream_graph: StreamGraph,
        job_graph: JobGraph,
        execution_graph: ExecutionGraph,
        *,
        levels: Sequence[str] = tuple(LEVELS),
        selected: str | None = None,
    ):
        unknown = [level for level in levels if level not in LEVELS]
        if unknown or not levels:
            raise ValueError(f"levels must be some of {', '.join(LEVELS)}, got {list(levels)!r}.")
        self.name = name
        self.graphs: dict[str, StreamGraph | JobGraph | ExecutionGraph] = {
            "stream": stream_graph,
            "job": job_graph,
            "execution": execution_graph,
        }
        self.levels = tuple(dict.fromkeys(levels))
        if selected is None:
            selected = "job" if "job" in self.levels else self.levels[0]
        if selected not in self.levels:
            raise ValueError(f"selected must be one of {', '.join(self.levels)}, got {selected!r}.")
        self.selected = selected
        self._svgs: dict[str, str] = {}
        self._widget: ipywidgets.Tab | None = None

    def __repr__(self) -> str:
        stream, job, execution = self.graphs["stream"], self.graphs["job"], self.graphs["execution"]
        assert isinstance(stream, StreamGraph) and isinstance(job, JobGraph) and isinstance(execution, ExecutionGraph)
        return (
            f"<FlowGraphs {self.name!r}: {len(stream.nodes)} stream nodes, {len(job.vertices)} job vertices, "
            f"{execution.num_subtasks} subtasks>"
        )

    def svg(self, level: str) -> str:
        """The SVG drawing of ``level``."""
        if level not in self._svgs:
            self._svgs[level] = to_svg(self.graphs[level])
        return self._svgs[level]

    def draw(self) -> FlowGraphs:
        """Lay out every level now, so that a Graphviz error is raised here, not while displaying."""
        _ = self.widget
        return self

    @property
    def widget(self) -> ipywidgets.Tab:
        """The ipywidgets view (built on first use)."""
        if self._widget is None:
            tab = ipywidgets.Tab(
                children=[self._level_view(level) for level in self.levels],
                titles=[LEVELS[level] for level in self.levels],
                selected_index=self.levels.index(self.selected),
            )
            tab.add_class("flowmagic-graphs")
            self._widget = tab
        return self._widget

    def _level_view(self, level: str) -> ipywidgets.VBox:
        drawing = ipywidgets.HTML(f'{_STYLE}<div class="flowmagic-svg {_NO_MATH}">{self.svg(level)}</div>')
        drawing.add_class("flowmagic-graph")
        items = graph_details(self.graphs[level])
        details = ipywidgets.HTML(details_html(items[0]) if items else "")
        selector = ipywidgets.Dropdown(
            options=[(" ".join(printable(item.label).splitlines()), position) for position, item in enumerate(items)],
            description="Details of",
            style={"description_width": "initial"},
            layout=ipywidgets.Layout(width="max-content", max_width="100%"),
        )

        def show(change: dict[str, Any]) -> None:
            details.value = details_html(items[change["new"]])

        selector.observe(show, names="value")
        view = ipywidgets.VBox([drawing, selector, details])
        view.add_class(f"flowmagic-level-{level}")
        return view

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_()
        bundle["text/plain"] = repr(self)
        bundle["image/svg+xml"] = self.svg(self.selected)
        return bundle
