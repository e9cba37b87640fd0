"""A Calc with an OVER call splits into the window's input, a LogicalWindow and a Calc on top
(Calcite's ProjectToWindowRule), for the batch planner, which has no Rank for these: the input
keeps plain projections and the window's operands (expressions other than field references are
named ``$i``), the window adds ``w0$o0``."""

from __future__ import annotations

from dataclasses import dataclass

from flowmagic.sql.logical import Field, LogicalCalc, LogicalWindow, RelNode
from flowmagic.sql.rex import InputRef, Over, Rex, shift
from flowmagic.sql.rules import bottom_up

__all__ = ["WindowInput", "apply", "window_input"]


@dataclass(frozen=True)
class WindowInput:
    """What an OVER call's operator reads (Calcite's ProjectToWindowRule's bottom projection):
    the plain projections and the window's operands, each once, on the Calc's input."""

    #: The input itself when that projection is the identity, else a Calc making it.
    rel: RelNode
    #: Each plain projection's position in :attr:`rel`, by its position in the Calc.
    plain: dict[int, int]
    partition: tuple[int, ...]
    #: (field, descending, nulls last) per ORDER BY key.
    order: list[tuple[int, bool, bool]]


def window_input(calc: LogicalCalc, over_index: int) -> WindowInput:
    """The input of the OVER call at ``over_index`` of ``calc``'s projections: expressions other
    than field references are named ``$i``, as Calcite names them."""
    over = calc.projects[over_index]
    assert isinstance(over, Over)
    source = calc.inputs[0]
    bottom: list[Rex] = []
    names: list[str] = []

    def place(rex: Rex) -> int:
        if rex in bottom:
            return bottom.index(rex)
        bottom.append(rex)
        names.append(source.fields[rex.index].name if isinstance(rex, InputRef) else f"${len(bottom) - 1}")
        return len(bottom) - 1

    plain = {i: place(p) for i, p in enumerate(calc.projects) if i != over_index}
    partition = tuple(place(p) for p in over.partition)
    order = [(place(k.expression), k.descending, k.nulls_last) for k in over.order]
    bottom_calc = LogicalCalc([source], [Field(n, b.type) for n, b in zip(names, bottom, strict=True)], bottom, None)
    return WindowInput(source if bottom_calc.is_identity else bottom_calc, plain, partition, order)


def _split(node: RelNode) -> RelNode:
    if not isinstance(node, LogicalCalc) or node.condition is not None:
        return node
    overs = [i for i, p in enumerate(node.projects) if isinstance(p, Over)]
    if len(overs) != 1:
        return node
    over = node.projects[overs[0]]
    assert isinstance(over, Over)
    split = window_input(node, overs[0])
    window_input_rel, plain = split.rel, split.plain
    fields = [*window_input_rel.fields, Field("w0$o0", over.type)]
    window = LogicalWindow(
        [window_input_rel], fields, partition=split.partition, order=split.order, calls=[over.operator]
    )

    def remap(index: int) -> Rex:
        if index == overs[0]:
            return InputRef(over.type, len(window_input_rel.fields))
        return InputRef(node.fields[index].type, plain[index])

    projects = [remap(i) if i == overs[0] else shift(p, remap) for i, p in enumerate(node.projects)]
    top = LogicalCalc([window], node.fields, projects, None)
    return window if top.is_identity else top


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _split)
