"""Notebook views: the graph widget (ipywidgets) and the live job view (imported by the magics)."""

from flowmagic.widgets.graph_view import LEVELS, FlowGraphs, GraphPicture
from flowmagic.widgets.job_view import JobView

__all__ = ["LEVELS", "FlowGraphs", "GraphPicture", "JobView"]
