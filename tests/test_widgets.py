"""flowmagic.widgets: the tabbed graph widget and what a saved notebook keeps of it."""

from __future__ import annotations

import ipywidgets
import pytest

import flowmagic
from flowmagic.render import graph_details, to_svg
from flowmagic.widgets import LEVELS, FlowGraphs
from flowmagic.widgets.graph_view import details_html

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def wordcount_graphs(name: str = "wordcount", operator: str = "Flat Map"):
    env = flowmagic.StreamExecutionEnvironment(parallelism=4)
    (
        env.from_collection(["to be or not to be"])
        .flat_map(lambda line: [(w, 1) for w in line.split()])
        .name(operator)
        .key_by(lambda t: t[0])
        .sum(1)
        .print()
    )
    stream_graph = env.get_stream_graph(name)
    job_graph = stream_graph.get_job_graph()
    return stream_graph, job_graph, job_graph.get_execution_graph()


@pytest.fixture(scope="module")
def view() -> FlowGraphs:
    return FlowGraphs("wordcount", *wordcount_graphs())


def level_parts(tab: ipywidgets.Tab, index: int) -> tuple[ipywidgets.HTML, ipywidgets.Dropdown, ipywidgets.HTML]:
    drawing, selector, details = tab.children[index].children
    return drawing, selector, details


def test_text_repr_is_deterministic(view) -> None:
    assert repr(view) == "<FlowGraphs 'wordcount': 4 stream nodes, 3 job vertices, 9 subtasks>"
    assert repr(FlowGraphs("wordcount", *wordcount_graphs())) == repr(view)


def test_mimebundle_has_the_widget_a_static_svg_and_text(view) -> None:
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {WIDGET_VIEW, "image/svg+xml", "text/plain"}
    assert bundle[WIDGET_VIEW]["model_id"] == view.widget.model_id
    assert bundle["text/plain"] == repr(view)
    # The static copy is the level shown first: the JobGraph.
    assert bundle["image/svg+xml"] == to_svg(view.graphs["job"])
    # Nothing but the SVG: no script, no widget state, no JavaScript bundle.
    assert "<script" not in bundle["image/svg+xml"]


def test_three_tabs_with_drawings_and_the_job_graph_first(view) -> None:
    tab = view.widget
    assert tab.titles == ("StreamGraph", "JobGraph", "ExecutionGraph")
    assert tab.selected_index == 1
    for index, level in enumerate(LEVELS):
        drawing, _, _ = level_parts(tab, index)
        assert to_svg(view.graphs[level]) in drawing.value
        assert "flowmagic-graph" in drawing._dom_classes
        assert f"flowmagic-level-{level}" in tab.children[index]._dom_classes


def test_selector_shows_each_nodes_details(view) -> None:
    _, selector, details = level_parts(view.widget, 0)
    assert [label for label, _ in selector.options] == [
        "1: Source: Collection Source",
        "2: Flat Map",
        "4: Keyed Aggregation",
        "5: Sink: Print to Std. Out",
    ]
    assert "Source: Collection Source" in details.value
    selector.value = 1
    hashes = view.graphs["stream"].operator_hashes
    assert f"<tr><th>Operator id</th><td>{hashes[2].hex()}</td></tr>" in details.value
    assert "<tr><th>Chaining strategy</th><td>ALWAYS</td></tr>" in details.value
    _, job_selector, job_details = level_parts(view.widget, 1)
    job_selector.value = 2
    assert "Keyed Aggregation -&gt; Sink: Print to Std. Out" in job_details.value
    assert "<th>Operator 2</th>" in job_details.value


def test_one_level_only() -> None:
    only = FlowGraphs("wc", *wordcount_graphs(), levels=("execution",))
    assert only.widget.titles == ("ExecutionGraph",)
    assert only._repr_mimebundle_()["image/svg+xml"] == to_svg(only.graphs["execution"])


@pytest.mark.parametrize(
    ("levels", "selected", "message"),
    [(("jobs",), None, "levels must be"), ((), None, "levels must be"), (("stream",), "job", "selected must be")],
)
def test_bad_levels(levels, selected, message) -> None:
    with pytest.raises(ValueError, match=message):
        FlowGraphs("wc", *wordcount_graphs(), levels=levels, selected=selected)


def test_names_cannot_inject_html() -> None:
    nasty = "<img src=x onerror=alert(1)>\n<script>alert(2)</script> $x$ \x07"
    view = FlowGraphs("wc", *wordcount_graphs(operator=nasty))
    for index in range(3):
        drawing, selector, details = level_parts(view.widget, index)
        for html in (drawing.value, details.value):
            assert "<img" not in html and "<script" not in html
        # Options are plain text to ipywidgets; one line each, without control characters.
        assert all("\n" not in label and "\x07" not in label for label, _ in selector.options)
    nasty_node = graph_details(view.graphs["stream"])[1]
    assert "<td>&lt;img src=x onerror=alert(1)&gt;\n&lt;script&gt;alert(2)&lt;/script&gt; $x$ \ufffd</td>" in (
        details_html(nasty_node)
    )


def test_drawings_follow_the_notebook_theme(view) -> None:
    drawing, _, _ = level_parts(view.widget, 1)
    # Graphviz paints a white page; in the notebook the background is transparent and
    # edges and their labels take JupyterLab's theme colours (legible in the dark theme).
    assert "svg > g > polygon:first-of-type { fill: transparent; }" in drawing.value
    assert "g.edge text" in drawing.value and "var(--jp-ui-font-color1" in drawing.value
    assert "tex2jax_ignore" in drawing.value  # "$x$" in a name is not typeset as maths
