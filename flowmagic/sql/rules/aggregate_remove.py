"""An aggregate whose input is already unique on its group keys is a projection
(FlinkAggregateRemoveRule): each group holds one row, so SUM, MIN and MAX of an argument are the
argument itself. A Calc takes the keys and the calls' arguments, cast where the aggregate's type
differs (Calcite's ``RelBuilder.convert``).

Uniqueness is Calcite's ``RelMdColumnUniqueness``: VALUES whose literal rows differ on the keys,
the group keys of an aggregate, and what a Calc passes through unchanged."""

from __future__ import annotations

from flowmagic.sql.logical import LogicalAggregate, LogicalCalc, LogicalValues, RelNode
from flowmagic.sql.rex import Call, InputRef, Rex
from flowmagic.sql.rules import bottom_up

_REMOVABLE = {"SUM", "MIN", "MAX"}


def unique(node: RelNode, keys: set[int]) -> bool:
    """Whether no two rows of ``node`` agree on all of ``keys``."""
    if isinstance(node, LogicalValues):
        seen = [tuple((row[k].value, row[k].type.name) for k in sorted(keys)) for row in node.rows]
        return len(set(seen)) == len(seen)
    if isinstance(node, LogicalAggregate):
        return set(range(len(node.group))) <= keys
    if isinstance(node, LogicalCalc):
        below = {p.index for k in keys if isinstance(p := node.projects[k], InputRef)}
        return len(below) == len(keys) and unique(node.inputs[0], below)
    return False


def _remove(node: RelNode) -> RelNode:
    if not isinstance(node, LogicalAggregate) or not node.group:
        return node
    if any(c.function not in _REMOVABLE or c.distinct or c.filter is not None or len(c.args) != 1 for c in node.calls):
        return node
    source = node.inputs[0]
    if not unique(source, set(node.group)):
        return node
    picked = [*node.group, *(c.args[0] for c in node.calls)]
    projects: list[Rex] = []
    for field, index in zip(node.fields, picked, strict=True):
        ref = InputRef(source.fields[index].type, index)
        projects.append(ref if ref.type == field.type else Call(field.type, "CAST", (ref,)))
    return LogicalCalc([source], list(node.fields), projects, None)


def apply(rel: RelNode) -> RelNode:
    return bottom_up(rel, _remove)
