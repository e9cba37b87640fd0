"""ROW_NUMBER() filtered to a range of rank numbers becomes a Rank (Flink's FlinkLogicalRankRule
after Calcite's ProjectToWindowRule): the windowed Calc splits into the Rank's input (its plain
projections and the window's operands; expressions other than field references are named
``$i``), the Rank, and a Calc on top with what remains of the filter."""

from __future__ import annotations

from flowmagic.sql.errors import TableException
from flowmagic.sql.logical import Field, LogicalCalc, LogicalRank, RelNode
from flowmagic.sql.rex import Call, InputRef, Literal, Over, Rex, conjunctions, inputs_used, shift
from flowmagic.sql.rules import bottom_up
from flowmagic.sql.rules.filter_into_join import conjunction
from flowmagic.sql.rules.over_window import window_input


def rank_range(parts: list[Rex], rank: int) -> tuple[int, int, list[Rex]] | None:
    start, end, rest = 1, None, []
    for part in parts:
        if isinstance(part, Call) and len(part.operands) == 2:
            left, right = part.operands
            operator = part.operator
            if isinstance(right, InputRef) and isinstance(left, Literal):
                left, right = right, left
                operator = {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}.get(operator, operator)
            if isinstance(left, InputRef) and left.index == rank and isinstance(right, Literal):
                value = int(str(right.value))
                if operator == "<=":
                    end = value
                    continue
                if operator == "<":
                    end = value - 1
                    continue
                if operator == "=":
                    start, end = value, value
                    continue
                if operator == ">=":
                    start = value
                    continue
                if operator == ">":
                    start = value + 1
                    continue
        rest.append(part)
    return None if end is None else (start, end, rest)


def _rank(node: RelNode) -> RelNode:
    if not (isinstance(node, LogicalCalc) and node.condition is not None and isinstance(node.inputs[0], LogicalCalc)):
        return node
    windowed = node.inputs[0]
    overs = [i for i, p in enumerate(windowed.projects) if isinstance(p, Over)]
    if len(overs) != 1 or windowed.condition is not None:
        return node
    over = windowed.projects[overs[0]]
    assert isinstance(over, Over)
    if over.operator != "ROW_NUMBER":
        raise TableException(f"{over.operator}() on streaming table is not supported currently")
    found = rank_range(conjunctions(node.condition), overs[0])
    if found is None:
        return node
    start, end, rest = found
    split = window_input(windowed, overs[0])
    rank_input, plain = split.rel, split.plain
    used = set().union(*(inputs_used(p) for p in node.projects), *(inputs_used(r) for r in rest))
    output_rank = overs[0] in used
    fields = list(rank_input.fields) + ([Field("w0$o0", over.type)] if output_rank else [])
    rank = LogicalRank(
        [rank_input],
        fields,
        partition=split.partition,
        order=split.order,
        rank_start=start,
        rank_end=end,
        output_rank=output_rank,
    )

    def remap(index: int) -> Rex:
        if index == overs[0]:
            return InputRef(over.type, len(rank_input.fields))
        return InputRef(windowed.fields[index].type, plain[index])

    projects = [shift(p, remap) for p in node.projects]
    remaining = conjunction([shift(r, remap) for r in rest])
    return LogicalCalc([rank], node.fields, projects, remaining)


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _rank)
