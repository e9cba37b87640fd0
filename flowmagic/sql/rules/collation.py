"""The row order a batch plan's node promises (Calcite's collation trait) and the Sort Flink adds
where a physical node loses an order its logical input promised.

Calcite's ``RelMdCollation.values`` derives, from a VALUES node's literal rows, the columns on
which they are already sorted: for each column in turn, that column and then every later column
that keeps the rows sorted (ascending, nulls last, ties allowed); a column the rows are not sorted
on starts no collation. A projection maps the first such collation through its plain field
references (as far as they reach), a window keeps its input's, anything else promises none.
Flink's batch rules convert a node's input with the input's logical trait set, collation
included, so where the physical input no longer delivers that order (an exchange or an
OverAggregate in between) the Volcano planner enforces it with a ``Sort``: the extra Sort under an
ORDER BY over VALUES, and the Sort above an OverAggregate that numbers rows of VALUES. flowmagic
takes the first collation Calcite lists, as the trait set does."""

from __future__ import annotations

from decimal import Decimal
from itertools import pairwise

from flowmagic.sql import physical as ph
from flowmagic.sql.logical import LogicalCalc, LogicalSort, LogicalValues, LogicalWindow, RelNode
from flowmagic.sql.rex import InputRef, Literal, Rex

Collation = list[tuple[int, bool, bool]]


def _value(literal: Literal) -> tuple[int, object]:
    """A sort key ordering nulls last, and decimals and numbers by value."""
    if literal.value is None:
        return (1, 0)
    if literal.type.is_numeric:
        return (0, Decimal(str(literal.value)))
    return (0, literal.value)


def _sorted(rows: list[list[Literal]], columns: list[int]) -> bool:
    keys = [tuple(_value(row[c]) for c in columns) for row in rows]
    return all(a <= b for a, b in pairwise(keys))


def values_collation(rows: list[list[Literal]], width: int) -> Collation:
    """The first collation ``RelMdCollation.values`` finds for ``rows``."""
    for first in range(width):
        if not _sorted(rows, [first]):
            continue
        columns = [first]
        for later in range(first + 1, width):
            if _sorted(rows, [*columns, later]):
                columns.append(later)
        return [(c, False, False) for c in columns]
    return []


def _through(collation: Collation, projects: list[Rex]) -> Collation:
    mapped: Collation = []
    for index, desc, nulls_first in collation:
        target = next((i for i, p in enumerate(projects) if isinstance(p, InputRef) and p.index == index), None)
        if target is None:
            break
        mapped.append((target, desc, nulls_first))
    return mapped


def logical(node: RelNode) -> Collation:
    """The order Calcite's metadata says the rows of a logical node have."""
    if isinstance(node, LogicalValues):
        return values_collation(node.rows, len(node.fields))
    if isinstance(node, LogicalCalc):
        return _through(logical(node.inputs[0]), list(node.projects))
    if isinstance(node, LogicalWindow):
        return logical(node.inputs[0])
    if isinstance(node, LogicalSort):
        return list(node.keys)
    return []


def provided(node: ph.PhysicalNode) -> Collation:
    """The order a physical node's output keeps."""
    if isinstance(node, ph.Values):
        return values_collation(node.rows, len(node.fields))
    if isinstance(node, ph.Calc):
        return _through(provided(node.inputs[0]), list(node.projects))
    if isinstance(node, (ph.Sort, ph.SortLimit)):
        return list(node.keys)
    return []


def enforce(child: ph.PhysicalNode, required: Collation) -> ph.PhysicalNode:
    """``child``, sorted by ``required`` unless it already delivers that order."""
    if not required or provided(child)[: len(required)] == required:
        return child
    return ph.Sort([child], list(child.fields), keys=list(required))
