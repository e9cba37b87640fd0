"""Drawing the graphs: DOT text, SVG, hover details and text explanations.

Rendering is kept apart from the model, as dask keeps ``dask.dot`` apart from its graphs:
this package reads the plain graph objects of :mod:`flowmagic.graph` only and never imports
IPython or ipywidgets, so graphs can be drawn from any Python program::

    from flowmagic.render import to_svg
    svg = to_svg(env.get_job_graph())
"""

from __future__ import annotations

from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.graph.job_graph import JobGraph
from flowmagic.graph.physical_graph import PhysicalGraph
from flowmagic.graph.stream_graph import StreamGraph
from flowmagic.render.details import NodeDetails, graph_details, slot_demand
from flowmagic.render.dot import (
    BUNDLE_ABOVE,
    COLLAPSE_ABOVE,
    COLLAPSE_SLOTS_ABOVE,
    STATE_FILLS,
    DotGraph,
    execution_graph_to_dot,
    job_graph_to_dot,
    load_colours,
    physical_graph_to_dot,
    printable,
    record_colour,
    spark_placement_to_dot,
    stream_graph_to_dot,
    to_dot,
)
from flowmagic.render.explain import explain
from flowmagic.render.layout import GraphvizError, dot_to_svg, set_titles, warm_up
from flowmagic.render.pictures import picture_html, stack_svgs, svg_size

__all__ = [
    "BUNDLE_ABOVE",
    "COLLAPSE_ABOVE",
    "COLLAPSE_SLOTS_ABOVE",
    "STATE_FILLS",
    "DotGraph",
    "GraphvizError",
    "NodeDetails",
    "dot_to_svg",
    "execution_graph_to_dot",
    "explain",
    "graph_details",
    "job_graph_to_dot",
    "load_colours",
    "physical_graph_to_dot",
    "picture_html",
    "printable",
    "record_colour",
    "slot_demand",
    "spark_placement_to_dot",
    "stack_svgs",
    "stream_graph_to_dot",
    "svg_size",
    "to_dot",
    "to_svg",
    "warm_up",
]


def to_svg(graph: StreamGraph | JobGraph | ExecutionGraph | PhysicalGraph, *, all_subtasks: bool = False) -> str:
    """The SVG drawing of any of the four graphs, with hover details on every element.

    An ExecutionGraph's wide vertices, and a physical graph's slots past the first few, are
    drawn collapsed unless ``all_subtasks``.
    """
    dot = to_dot(graph, all_subtasks=all_subtasks)
    return set_titles(dot_to_svg(dot.source), dot.titles)
