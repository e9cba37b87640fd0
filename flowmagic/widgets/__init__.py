"""ipywidgets views of the graphs (imported by the magics; needs ipywidgets)."""

from flowmagic.widgets.graph_view import LEVELS, FlowGraphs

__all__ = ["LEVELS", "FlowGraphs"]
