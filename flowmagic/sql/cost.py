"""Flink's batch cost model (``FlinkCost`` and each physical node's ``computeSelfCost``), as far
as the planner compares alternatives with it: the CPU a node spends, from the row estimates of
:mod:`flowmagic.sql.statistics`.

``FlinkCost.isLe`` compares CPU first; memory, network and I/O only break a tie of CPU, and then
the rows. The alternatives flowmagic costs (an aggregate's hash or sort strategy, in one or two
phases) differ in CPU, so the CPU and the rows decide here."""

from __future__ import annotations

import math

from flowmagic.sql import physical as ph
from flowmagic.sql.statistics import row_count

BASE_CPU_COST = 1
#: Hash one field: compute the hash, probe the table, walk its chain.
HASH_CPU_COST = 8 * BASE_CPU_COST
#: Serialize and deserialize a row for an exchange.
SERIALIZE_DESERIALIZE_CPU_COST = 160 * BASE_CPU_COST
SINGLETON_CPU_COST = 1 * BASE_CPU_COST
RANDOM_CPU_COST = 1 * BASE_CPU_COST
COMPARE_CPU_COST = 4 * BASE_CPU_COST
#: Evaluate one function (an aggregate call) on one row.
FUNC_CPU_COST = 12 * BASE_CPU_COST


def self_cpu(node: ph.PhysicalNode) -> float:
    """The CPU ``node`` itself spends (its ``computeSelfCost``); 0 for the nodes no alternative
    flowmagic weighs differs in."""
    if isinstance(node, ph.Exchange):
        rows = row_count(node.inputs[0])
        if node.distribution == "hash":
            return (HASH_CPU_COST * len(node.keys) + SERIALIZE_DESERIALIZE_CPU_COST) * rows
        if node.distribution == "single":
            return (SINGLETON_CPU_COST + SERIALIZE_DESERIALIZE_CPU_COST) * rows
        return SERIALIZE_DESERIALIZE_CPU_COST * rows
    if isinstance(node, ph.Sort):
        rows = row_count(node.inputs[0])
        return COMPARE_CPU_COST * len(node.keys) * rows * max(math.log(rows), 1.0) if rows > 0 else 0.0
    if isinstance(node, ph.BatchAggregate):
        rows = row_count(node.inputs[0])
        calls = FUNC_CPU_COST * rows * len(node.calls)
        if node.strategy == "Hash":
            return HASH_CPU_COST * rows * len(node.grouping) + calls
        return calls
    return 0.0


def _subtree(node: ph.PhysicalNode) -> set[int]:
    return {id(node)}.union(*(_subtree(child) for child in node.inputs))


def cpu_between(top: ph.PhysicalNode, bottom: ph.PhysicalNode) -> float:
    """The CPU of the nodes an alternative built over ``bottom`` adds to it (``bottom`` and the
    nodes below it, shared by every alternative, excluded)."""
    shared = _subtree(bottom)

    def cpu(node: ph.PhysicalNode) -> float:
        if id(node) in shared:
            return 0.0
        return self_cpu(node) + sum(cpu(child) for child in node.inputs)

    return cpu(top)


def cheapest(alternatives: list[ph.PhysicalNode], bottom: ph.PhysicalNode) -> ph.PhysicalNode:
    """The alternative Flink's Volcano planner keeps: least CPU, then fewest rows; the first
    listed of a tie."""
    return min(alternatives, key=lambda plan: (cpu_between(plan, bottom), row_count(plan)))
