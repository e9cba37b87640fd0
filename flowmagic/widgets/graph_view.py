"""The graph widget: one tab per graph level, each with its drawing and a node selector.

The drawings are Graphviz SVG placed inline, so hovering an element shows its ``<title>``
(the node's details) without any script. Under each drawing a drop-down lists the nodes and
shows the selected one's details, so they are reachable without a mouse too. Above it, the
drawing can be zoomed (it scrolls when larger than its box) and, for an ExecutionGraph with
collapsed vertices, expanded to every subtask.

Displayed, :class:`FlowGraphs` makes two outputs: first a picture of every level (the
:meth:`~FlowGraphs.saved_bundle`), then the widget. Saved notebooks and their exports show
the pictures where the widget cannot be drawn: JupyterLab with the notebook untrusted (it
shows sanitized ``text/html`` only), ``jupyter nbconvert --to html`` opened offline (the
widget needs scripts from a CDN) and GitHub (which draws no widgets). While the widget is
drawn, a style rule in it hides the pictures of its own output area, so a live notebook
shows the widget alone. No JavaScript is shipped: the widget is built from ipywidgets'
own controls.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

import ipywidgets

from flowmagic import compile as passes
from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.graph.job_graph import JobGraph
from flowmagic.graph.physical_graph import PhysicalGraph
from flowmagic.graph.stream_graph import StreamGraph
from flowmagic.render import (
    COLLAPSE_ABOVE,
    COLLAPSE_SLOTS_ABOVE,
    NodeDetails,
    graph_details,
    picture_html,
    printable,
    slot_demand,
    stack_svgs,
    svg_size,
    to_svg,
)
from flowmagic.widgets.sql_plans import SqlPlans

__all__ = ["LEVELS", "FlowGraphs", "GraphPicture", "physical_error_html"]

#: Level name -> tab title, in tab order.
LEVELS = {"stream": "StreamGraph", "job": "JobGraph", "execution": "ExecutionGraph", "physical": "Physical"}

# The first rule hides the pictures displayed with the widget while the widget is drawn (see
# the module docstring); the next ones keep a drawing within the output area, scrolling,
# rather than clipped by it. Graphviz paints for a white page; in a notebook the drawing
# follows the JupyterLab theme (dark included): transparent background, and edges, edge labels
# and boxes in theme colours. Nodes keep their light fills and dark text, legible on any
# theme. Class names are scoped.
_STYLE = """<style>
.jp-OutputArea:has(.flowmagic-graphs) > .jp-OutputArea-child:has(.flowmagic-static) { display: none; }
.flowmagic-graph, .flowmagic-graph > .widget-html-content { width: 100%; min-width: 0; }
.flowmagic-svg { overflow: auto; max-height: 640px; width: 100%; }
.flowmagic-svg svg { display: block; max-width: none; }
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
.flowmagic-error { border-left: 4px solid #dc2626; padding: 4px 10px; white-space: pre-wrap; }
</style>"""
# MathJax would typeset "$...$" in operator names: these classes make it leave them alone.
_NO_MATH = "tex2jax_ignore mathjax_ignore"
#: Zoom choices of a drawing: label -> scale (0: as wide as the output area).
ZOOMS = {"Fit": 0.0, "50%": 0.5, "100%": 1.0, "200%": 2.0}
_ROOT_SIZE = re.compile(r'\A<svg width="[0-9.]+pt" height="[0-9.]+pt"')


def zoomed(svg: str, scale: float) -> str:
    """``svg`` drawn at ``scale`` times its size, or as wide as its box with ``scale`` 0."""
    if scale == 0:
        return _ROOT_SIZE.sub('<svg width="100%"', svg, 1)
    width, height = svg_size(svg)
    return _ROOT_SIZE.sub(f'<svg width="{width * scale:g}pt" height="{height * scale:g}pt"', svg, 1)


def details_html(item: NodeDetails) -> str:
    """The rows of one node as an HTML table; every value is escaped."""
    rows = "".join(
        f"<tr><th>{html.escape(name)}</th><td>{html.escape(printable(value))}</td></tr>" for name, value in item.rows
    )
    return f'<div class="flowmagic-details {_NO_MATH}"><table>{rows}</table></div>'


def physical_error_html(graph: PhysicalGraph) -> str:
    """Flink's error for a job the cluster has too few slots for, and why, as HTML."""
    demand, why = slot_demand(graph)
    return (
        f'<div class="flowmagic-error {_NO_MATH}"><b>org.apache.flink.runtime.jobmanager.scheduler.'
        f"NoResourceAvailableException: {html.escape(graph.error or '')}</b>\n"
        f"The job needs {graph.slots_needed} slots = {html.escape(demand)} ({html.escape(why)}); the cluster has "
        f"{graph.taskmanagers} "
        f"TaskManagers x {graph.slots_per_taskmanager} slots = {graph.slots_available}.</div>"
    )


class FlowGraphs:
    """The drawings of one pipeline's graphs.

    ``levels`` picks the tabs (of ``"stream"``, ``"job"``, ``"execution"``, ``"physical"``)
    and ``selected`` the one shown first (default: the JobGraph, what Flink's web UI draws).
    ``physical_graph`` defaults to the ExecutionGraph on a local environment's cluster.
    """

    def __init__(
        self,
        name: str,
        stream_graph: StreamGraph,
        job_graph: JobGraph,
        execution_graph: ExecutionGraph,
        *,
        physical_graph: PhysicalGraph | None = None,
        levels: Sequence[str] = tuple(LEVELS),
        selected: str | None = None,
    ):
        unknown = [level for level in levels if level not in LEVELS]
        if unknown or not levels:
            raise ValueError(f"levels must be some of {', '.join(LEVELS)}, got {list(levels)!r}.")
        self.name = name
        if physical_graph is None:
            physical_graph = passes.deploy(execution_graph)
        self.graphs: dict[str, StreamGraph | JobGraph | ExecutionGraph | PhysicalGraph] = {
            "stream": stream_graph,
            "job": job_graph,
            "execution": execution_graph,
            "physical": physical_graph,
        }
        self.levels = tuple(dict.fromkeys(levels))
        if selected is None:
            selected = "job" if "job" in self.levels else self.levels[0]
        if selected not in self.levels:
            raise ValueError(f"selected must be one of {', '.join(self.levels)}, got {selected!r}.")
        self.selected = selected
        # Vertices the ExecutionGraph draws collapsed unless asked to draw every subtask.
        self._collapsed = [
            vertex for vertex in execution_graph.vertices.values() if vertex.parallelism > COLLAPSE_ABOVE
        ]
        self._svgs: dict[tuple[str, bool], str] = {}
        self._widget: ipywidgets.Tab | None = None
        #: A SQL statement's plans, drawn in a first tab before the graphs (``%%flow NAME --sql``).
        self.sql_plans: SqlPlans | None = None

    def __repr__(self) -> str:
        stream, job, execution = self.graphs["stream"], self.graphs["job"], self.graphs["execution"]
        assert isinstance(stream, StreamGraph) and isinstance(job, JobGraph) and isinstance(execution, ExecutionGraph)
        return (
            f"<FlowGraphs {self.name!r}: {len(stream.nodes)} stream nodes, {len(job.vertices)} job vertices, "
            f"{execution.num_subtasks} subtasks>"
        )

    def svg(self, level: str, *, all_subtasks: bool = False) -> str:
        """The SVG drawing of ``level``; ``all_subtasks`` draws an ExecutionGraph's wide
        vertices subtask by subtask, and every slot of a physical graph, instead of collapsed."""
        key = (level, all_subtasks and level in ("execution", "physical"))
        if key not in self._svgs:
            self._svgs[key] = to_svg(self.graphs[level], all_subtasks=key[1])
        return self._svgs[key]

    def draw(self) -> FlowGraphs:
        """Lay out every level now, so that a Graphviz error is raised here, not while displaying."""
        _ = self.widget
        return self

    @property
    def widget(self) -> ipywidgets.Tab:
        """The ipywidgets view (built on first use)."""
        if self._widget is None:
            children: list[ipywidgets.Widget] = [self._level_view(level) for level in self.levels]
            titles = [LEVELS[level] for level in self.levels]
            selected = self.levels.index(self.selected)
            if self.sql_plans is not None:
                plans = ipywidgets.HTML(self.sql_plans.html())
                plans.add_class("flowmagic-level-sql")
                children, titles, selected = [plans, *children], ["SQL plans", *titles], 0
            tab = ipywidgets.Tab(children=children, titles=titles, selected_index=selected)
            tab.add_class("flowmagic-graphs")
            self._widget = tab
        return self._widget

    def _level_view(self, level: str) -> ipywidgets.VBox:
        drawing = ipywidgets.HTML()
        drawing.add_class("flowmagic-graph")
        zoom = ipywidgets.ToggleButtons(
            options=list(ZOOMS.items()),
            value=1.0,
            description="Zoom",
            style={"button_width": "auto", "description_width": "initial"},
        )
        controls: list[ipywidgets.Widget] = [zoom]
        expand = None
        if level == "execution" and self._collapsed:
            subtasks = sum(vertex.parallelism for vertex in self._collapsed)
            expand = ipywidgets.Checkbox(
                value=False,
                description=f"Draw all {subtasks} subtasks of the {len(self._collapsed)} collapsed vertices",
                indent=False,
                layout=ipywidgets.Layout(width="max-content"),
            )
            controls.append(expand)
        physical = self.graphs["physical"]
        assert isinstance(physical, PhysicalGraph)
        if level == "physical" and physical.error is None and len(physical.slots) > COLLAPSE_SLOTS_ABOVE:
            expand = ipywidgets.Checkbox(
                value=False,
                description=f"Draw all {len(physical.slots)} slots",
                indent=False,
                layout=ipywidgets.Layout(width="max-content"),
            )
            controls.append(expand)

        def redraw(change: dict[str, Any] | None = None) -> None:
            if level == "physical" and physical.error is not None:
                # Flink fails such a job before deploying anything: its error is the picture.
                drawing.value = f"{_STYLE}{physical_error_html(physical)}"
                return
            svg = self.svg(level, all_subtasks=expand is not None and expand.value)
            drawing.value = f'{_STYLE}<div class="flowmagic-svg {_NO_MATH}">{zoomed(svg, zoom.value)}</div>'

        redraw()
        zoom.observe(redraw, names="value")
        if expand is not None:
            expand.observe(redraw, names="value")
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
        view = ipywidgets.VBox([ipywidgets.HBox(controls), drawing, selector, details])
        view.add_class(f"flowmagic-level-{level}")
        return view

    def saved_bundle(self) -> dict[str, str]:
        """The pictures a notebook keeps next to the widget, one per level, top to bottom.

        ``text/html`` holds each level as an ``<img>`` with a ``data:`` URI under its name
        (what JupyterLab shows untrusted, and nbconvert's HTML offline); ``image/svg+xml``
        the same drawings stacked in one SVG, for viewers that prefer images to HTML;
        ``text/plain`` a deterministic line, which nbval compares.
        """
        figures = []
        for level in self.levels:
            title = f"{LEVELS[level]} of {self.name}"
            figures.append(
                f"<p><b>{html.escape(LEVELS[level])}</b></p>{picture_html(self.svg(level), printable(title))}"
            )
        if self.sql_plans is not None:
            figures.insert(0, self.sql_plans.html())
        return {
            "text/html": f'<div class="flowmagic-static {_NO_MATH}">{"".join(figures)}</div>',
            "image/svg+xml": stack_svgs([(LEVELS[level], self.svg(level)) for level in self.levels]),
            "text/plain": repr(self),
        }

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.saved_bundle(), raw=True)
        # No text fallback: where the widget cannot be drawn, the pictures above stand for it.
        display({**self.widget._repr_mimebundle_(), "text/plain": ""}, raw=True)


class GraphPicture:
    """One drawing as a picture (``%flow show NAME --format svg``): ``text/html`` with an
    ``<img>``, which shows in untrusted notebooks too, and the ``image/svg+xml`` itself."""

    def __init__(self, svg: str, title: str):
        self.svg = svg
        self.title = title

    def __repr__(self) -> str:
        return f"<{self.title} (SVG)>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {
            "text/html": f'<div class="{_NO_MATH}">{picture_html(self.svg, printable(self.title))}</div>',
            "image/svg+xml": self.svg,
            "text/plain": repr(self),
        }
