"""flowmagic.widgets: the tabbed graph widget and what a saved notebook keeps of it."""

from __future__ import annotations

import base64
import re

import ipywidgets
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import flowmagic
from flowmagic.render import graph_details, stack_svgs, to_svg
from flowmagic.widgets import LEVELS, FlowGraphs, GraphPicture
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
    _, drawing, selector, details = tab.children[index].children
    return drawing, selector, details


def controls(tab: ipywidgets.Tab, index: int) -> tuple[ipywidgets.Widget, ...]:
    return tab.children[index].children[0].children


def pictures(html: str) -> list[str]:
    """The SVG documents of the data-URI ``<img>`` elements of ``html``."""
    sources = re.findall(r'<img src="data:image/svg\+xml;base64,([^"]+)"', html)
    return [base64.b64decode(source).decode("utf-8") for source in sources]


def wide_graphs():
    env = flowmagic.StreamExecutionEnvironment(parallelism=16)
    env.from_sequence(1, 100).map(lambda x: x).key_by(lambda x: x).sum(0).print()
    stream_graph = env.get_stream_graph("wide")
    job_graph = stream_graph.get_job_graph()
    return stream_graph, job_graph, job_graph.get_execution_graph()


def test_text_repr_is_deterministic(view) -> None:
    assert repr(view) == "<FlowGraphs 'wordcount': 4 stream nodes, 3 job vertices, 9 subtasks>"
    assert repr(FlowGraphs("wordcount", *wordcount_graphs())) == repr(view)


def test_displayed_as_pictures_of_every_level_then_the_widget(view) -> None:
    InteractiveShell.instance()
    with capture_output() as captured:
        view._ipython_display_()
    saved, live = (output.data for output in captured.outputs)
    assert saved == view.saved_bundle()
    assert live[WIDGET_VIEW]["model_id"] == view.widget.model_id
    # Where the widget cannot be drawn, the pictures stand for it: no text under them.
    assert live["text/plain"] == ""


def test_the_saved_bundle_shows_all_four_levels_as_pictures(view) -> None:
    bundle = view.saved_bundle()
    assert set(bundle) == {"text/html", "image/svg+xml", "text/plain"}
    assert bundle["text/plain"] == repr(view)
    # Untrusted JupyterLab keeps data-URI images but turns inline SVG into text: no inline SVG.
    assert pictures(bundle["text/html"]) == [to_svg(view.graphs[level]) for level in LEVELS]
    assert "<svg" not in bundle["text/html"] and "<script" not in bundle["text/html"]
    assert re.findall(r"<p><b>(\w+)</b></p>", bundle["text/html"]) == list(LEVELS.values())
    assert bundle["image/svg+xml"] == stack_svgs(
        [(title, to_svg(view.graphs[level])) for level, title in LEVELS.items()]
    )
    one = FlowGraphs("wc", *wordcount_graphs(), levels=("execution",)).saved_bundle()
    assert pictures(one["text/html"]) == [to_svg(view.graphs["execution"])]


def test_the_live_widget_hides_the_pictures_of_its_own_output_area(view) -> None:
    drawing, _, _ = level_parts(view.widget, 0)
    assert "flowmagic-static" in view.saved_bundle()["text/html"]
    assert (
        ".jp-OutputArea:has(.flowmagic-graphs) > .jp-OutputArea-child:has(.flowmagic-static) { display: none; }"
        in drawing.value
    )


def test_zoom(view) -> None:
    drawing, _, _ = level_parts(view.widget, 1)
    [zoom] = controls(view.widget, 1)
    assert [label for label, _ in zoom.options] == ["Fit", "50%", "100%", "200%"]
    width, height = re.match(r'<svg width="([0-9.]+)pt" height="([0-9.]+)pt"', to_svg(view.graphs["job"])).groups()
    assert f'<svg width="{width}pt" height="{height}pt"' in drawing.value
    zoom.value = 2.0
    assert f'<svg width="{float(width) * 2:g}pt" height="{float(height) * 2:g}pt"' in drawing.value
    zoom.value = 0.0
    # As wide as the output area; the viewBox keeps the proportions.
    assert '<svg width="100%"\n viewBox=' in drawing.value
    zoom.value = 1.0


def test_wide_execution_graphs_are_collapsed_and_expand_on_request() -> None:
    wide = FlowGraphs("wide", *wide_graphs())
    assert [len(controls(wide.widget, index)) for index in range(4)] == [1, 1, 2, 1]
    _, expand = controls(wide.widget, 2)
    assert expand.description == "Draw all 32 subtasks of the 2 collapsed vertices"
    drawing, _, _ = level_parts(wide.widget, 2)
    assert "… 12 more" in drawing.value and "Map (9/16)" not in drawing.value
    expand.value = True
    assert "… 12 more" not in drawing.value and "Map (9/16)" in drawing.value
    assert to_svg(wide.graphs["execution"], all_subtasks=True) in drawing.value
    # What the notebook keeps is the collapsed drawing.
    assert pictures(wide.saved_bundle()["text/html"])[2] == to_svg(wide.graphs["execution"])


def test_graph_picture() -> None:
    svg = to_svg(wordcount_graphs()[1])
    picture = GraphPicture(svg, "JobGraph of wc")
    bundle = picture._repr_mimebundle_()
    assert bundle["image/svg+xml"] == svg
    assert pictures(bundle["text/html"]) == [svg] and 'alt="JobGraph of wc"' in bundle["text/html"]
    assert bundle["text/plain"] == repr(picture) == "<JobGraph of wc (SVG)>"


def test_four_tabs_with_drawings_and_the_job_graph_first(view) -> None:
    tab = view.widget
    assert tab.titles == ("StreamGraph", "JobGraph", "ExecutionGraph", "Physical")
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
    assert pictures(only.saved_bundle()["text/html"]) == [to_svg(only.graphs["execution"])]


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
    for index in range(4):
        drawing, selector, details = level_parts(view.widget, index)
        for html in (drawing.value, details.value):
            assert "<img" not in html and "<script" not in html
    for svg in pictures(view.saved_bundle()["text/html"]):
        assert "<img" not in svg and "<script" not in svg
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


def test_the_physical_tab_draws_slots_and_lists_them(view) -> None:
    physical = view.graphs["physical"]
    # A local environment's cluster: one TaskManager, a slot per subtask of the widest vertex.
    assert (physical.taskmanagers, physical.slots_per_taskmanager, physical.slots_needed) == (1, 4, 4)
    drawing, selector, details = level_parts(view.widget, 3)
    assert to_svg(physical) in drawing.value
    assert [label for label, _ in selector.options] == [
        "wordcount: 4 slots",
        "Slot 1 (TaskManager 1, default)",
        "Slot 2 (TaskManager 1, default)",
        "Slot 3 (TaskManager 1, default)",
        "Slot 4 (TaskManager 1, default)",
    ]
    assert "<tr><th>Slots needed</th><td>4 = 4 (default): per slot sharing group" in details.value
    selector.value = 1
    assert "<tr><th>Flat Map (1/4)</th><td>in: 1 gate, 1 channel (1 local); out: 1 partition, 4 subpartitions" in (
        details.value
    )


def seed_graphs():
    env = flowmagic.StreamExecutionEnvironment(parallelism=4)
    (
        env.from_collection(["to be or not to be"])
        .flat_map(lambda line: [(w, 1) for w in line.split()])
        .slot_sharing_group("flatmap_sg")
        .key_by(lambda t: t[0])
        .sum(1)
        .set_parallelism(3)
        .slot_sharing_group("sum_sg")
        .print()
    )
    stream_graph = env.get_stream_graph("seed")
    job_graph = stream_graph.get_job_graph()
    return stream_graph, job_graph, job_graph.get_execution_graph()


def test_the_physical_tab_shows_flinks_error_when_slots_are_missing() -> None:
    seed = FlowGraphs("seed", *seed_graphs())
    physical = seed.graphs["physical"]
    assert (physical.slots_needed, physical.slots_available) == (9, 4)
    drawing, _, _ = level_parts(seed.widget, 3)
    assert "<svg" not in drawing.value
    assert (
        "NoResourceAvailableException: Could not acquire the minimum required resources.</b>\n"
        "The job needs 9 slots = 1 (default) + 4 (flatmap_sg) + 4 (sum_sg)"
    ) in drawing.value
    # The saved picture says the same.
    assert "Could not acquire the minimum required resources." in pictures(seed.saved_bundle()["text/html"])[3]
    enough = FlowGraphs("seed", *seed_graphs(), physical_graph=flowmagic.compile.deploy(seed_graphs()[2], 3, 3))
    drawing, _, _ = level_parts(enough.widget, 3)
    assert "<svg" in drawing.value and "9 slots needed" in drawing.value


def test_a_physical_graph_of_many_slots_draws_the_first_few_and_all_on_request() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=20)
    env.from_sequence(1, 100).map(lambda x: x).key_by(lambda x: x).sum(0).print()
    graphs = env.get_stream_graph("many"), env.get_job_graph("many"), env.get_execution_graph("many")
    many = FlowGraphs("many", *graphs, physical_graph=flowmagic.compile.deploy(graphs[2], 10, 2))
    assert len(many.graphs["physical"].slots) == 20
    _, expand = controls(many.widget, 3)
    assert expand.description == "Draw all 20 slots"
    drawing, _, _ = level_parts(many.widget, 3)
    # Slots 1-3 (TaskManagers 1 and 2) and 20 (TaskManager 10) are drawn.
    assert "… 7 more TaskManagers" in drawing.value
    expand.value = True
    assert to_svg(many.graphs["physical"], all_subtasks=True) in drawing.value
