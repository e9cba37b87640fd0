"""A restore check drawn on the JobGraph: each vertex filled by its operators' verdicts.

Every vertex lists its chained operators, each with its verdict (restored, new, incompatible,
no state), and is filled by the gravest of them; savepoint state that no operator of the
program takes is drawn apart, dashed, by operator ID. A legend names the fills. Hovering a
vertex shows each operator's ID, states and what the restore does with them (the texts of
a refusal among them). The verdicts are plain data here (see
:mod:`flowmagic.runtime.continuous.restore_check` for how they are found).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from flowmagic.graph.job_graph import JobGraph
from flowmagic.render.details import job_edge_label, job_edge_text, short_id
from flowmagic.render.dot import DotGraph, quote

__all__ = ["VERDICT_FILLS", "restore_check_to_dot"]

#: Fills by verdict, gravest first (a vertex takes the gravest of its operators').
VERDICT_FILLS = {
    "incompatible": "#fecaca",
    "missing": "#fed7aa",
    "new": "#bfdbfe",
    "restored": "#bbf7d0",
    "no state": "#f3f4f6",
}
_MEANINGS = {
    "incompatible": "incompatible: refused",
    "missing": "missing: state without an operator",
    "new": "new: starts empty",
    "restored": "restored",
    "no state": "no state",
}
_HEADER = (
    'graph [rankdir=LR, bgcolor="white", fontname="Helvetica", fontsize=10, nodesep=0.2, ranksep=0.5, pad=0.1];\n'
    'node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, color="#4b5563", '
    'fontcolor="#111827", penwidth=1, margin="0.1,0.05"];\n'
    'edge [color="#4b5563", fontname="Helvetica", fontsize=8, fontcolor="#374151", arrowsize=0.6];\n'
)


def _left(lines: Sequence[str]) -> str:
    return '"' + "".join(quote(line)[1:-1] + "\\l" for line in lines) + '"'


def restore_check_to_dot(
    graph: JobGraph,
    verdicts: Mapping[str, tuple[str, Sequence[str]]],
    missing: Sequence[tuple[str, str, Sequence[str]]] = (),
    title: str = "",
) -> DotGraph:
    """``graph`` with each operator's verdict: ``verdicts`` maps an operator ID (hex) to its
    verdict (a key of :data:`VERDICT_FILLS`) and detail lines; ``missing`` lists savepoint
    state no operator takes, as (operator ID, verdict text, detail lines). ``title`` goes on
    top of the drawing."""
    parts = ['digraph "Restore check" {\n', _HEADER]
    if title:
        parts.append(f'label={quote(title)}; labelloc="t"; labeljust="l"; fontsize=11;\n')
    titles: dict[str, str] = {}
    order = graph.sorted_vertices()
    keys = {vertex.id: f"v{position}" for position, vertex in enumerate(order)}
    hashes = graph.stream_graph.operator_hashes
    for vertex in order:
        lines, hover, gravest = (
            [],
            [f"{vertex.name} [{short_id(vertex.id)}] · p={vertex.parallelism}"],
            len(VERDICT_FILLS),
        )
        for node_id in vertex.chain:
            name = graph.stream_graph.node(node_id).name
            operator_id = hashes[node_id].hex() if node_id in hashes else ""
            verdict, details = verdicts.get(operator_id, ("no state", ()))
            gravest = min(gravest, list(VERDICT_FILLS).index(verdict))
            lines.append(f"{name}: {verdict}")
            hover.append(f"\n{name} [{operator_id}]: {verdict}")
            hover.extend(f"  {detail}" for detail in details)
        lines.append(f"{short_id(vertex.id)} · p={vertex.parallelism}")
        fill = list(VERDICT_FILLS.values())[gravest]
        parts.append(f'{keys[vertex.id]} [label={_left(lines)}, fillcolor="{fill}"];\n')
        titles[keys[vertex.id]] = "\n".join(hover)
    for vertex in order:
        for edge in vertex.inputs:
            tail, head = keys[edge.source_vertex], keys[vertex.id]
            parts.append(f"{tail} -> {head} [label={quote(job_edge_label(edge))}];\n")
            titles[f"{tail}->{head}"] = f"{job_edge_text(graph, edge)} -> {vertex.name}"
    if missing:
        parts.append("subgraph cluster_missing {\n")
        parts.append('label="savepoint state without an operator"; style="rounded,dashed"; color="#9ca3af";\n')
        titles["cluster_missing"] = "State in the savepoint under operator IDs the program does not have"
        for position, (operator_id, verdict, details) in enumerate(missing):
            key = f"m{position}"
            label = _left([f"operator {operator_id}", verdict])
            parts.append(
                f'{key} [label={label}, style="rounded,filled,dashed", fillcolor="{VERDICT_FILLS["missing"]}"];\n'
            )
            titles[key] = "\n".join([f"operator {operator_id}: {verdict}", *(f"  {detail}" for detail in details)])
        parts.append("}\n")
    parts.append("subgraph cluster_legend {\n")
    parts.append('label="restore check"; style="rounded"; color="#d1d5db"; fontsize=9;\n')
    titles["cluster_legend"] = "What a restore from the savepoint does with each operator's state"
    legend = list(VERDICT_FILLS)
    for position, verdict in enumerate(legend):
        parts.append(
            f'legend{position} [label={quote(_MEANINGS[verdict])}, fillcolor="{VERDICT_FILLS[verdict]}", '
            "fontsize=8, height=0.2];\n"
        )
        titles[f"legend{position}"] = _MEANINGS[verdict]
    # One column, whatever the ranks of the graph beside it.
    parts.append("{rank=same; " + " ".join(f"legend{position};" for position in range(len(legend))) + "}\n")
    parts.append("}\n}\n")
    return DotGraph("".join(parts), titles)
