"""A Calc with an OVER call splits into the window's input, a LogicalWindow and a Calc on top
(Calcite's ProjectToWindowRule), for the batch planner, which has no Rank for these: the input
keeps plain projections and the window's operands (expressions other than field references are
named ``$i``), the window adds ``w0$o0``."""

from __future__ import annotations

from flowmagic.sql.logical import Field, LogicalCalc, LogicalWindow, RelNode
from flowmagic.sql.rex import InputRef, Over, Rex, shift
from flowmagic.sql.rules import bottom_up


def _split(node: RelNode) -> RelNode:
    if not isinstance(node, LogicalCalc) or node.condition is not None:
        return node
    overs = [i for i, p in enumerate(node.projects) if isinstance(p, Over)]
    if len(overs) != 1:
        return node
    over = node.projects[overs[0]]
    assert isinstance(over, Over)
    source = node.inputs[0]
    bottom: list[Rex] = []
    names: list[str] = []

    def place(rex: Rex) -> int:
        if rex in bottom:
            return bottom.index(rex)
        bottom.append(rex)
        names.append(source.fields[rex.index].name if isinstance(rex, InputRef) else f"${len(bottom) - 1}")
        return len(bottom) - 1

    plain = {i: place(p) for i, p in enumerate(node.projects) if i not in overs}
    partition = tuple(place(p) for p in over.partition)
    order = [(place(k.expression), k.descending, k.nulls_last) for k in over.order]
    calc = LogicalCalc([source], [Field(n, b.type) for n, b in zip(names, bottom, strict=True)], bottom, None)
    window_input: RelNode = source if calc.is_identity else calc
    fields = [*window_input.fields, Field("w0$o0", over.type)]
    window = LogicalWindow([window_input], fields, partition=partition, order=order, calls=[over.operator])

    def remap(index: int) -> Rex:
        if index == overs[0]:
            return InputRef(over.type, len(window_input.fields))
        return InputRef(node.fields[index].type, plain[index])

    projects = [remap(i) if i == overs[0] else shift(p, remap) for i, p in enumerate(node.projects)]
    top = LogicalCalc([window], node.fields, projects, None)
    return window if top.is_identity else top


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _split)
