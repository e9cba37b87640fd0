"""Flink's optimization of a logical plan, as a fixed sequence of rewrites in Flink's phase order
(logical rewrites, projection push-down, physical conversion, changelog inference)."""

from __future__ import annotations

from flowmagic.sql import physical as ph
from flowmagic.sql.logical import RelNode
from flowmagic.sql.rules import (
    aggregate_project_merge,
    aggregate_reduce_functions,
    aggregate_remove,
    batch_rank,
    calc_conversion,
    calc_merge,
    calc_remove,
    calc_union_transpose,
    changelog,
    filter_aggregate_transpose,
    filter_into_join,
    filter_window_transpose,
    join_condition_push,
    over_window,
    project_push_down,
    rank,
    reduce_expressions,
    sort_project_transpose,
    to_physical,
    union_casts,
)


def optimize(
    logical: RelNode, streaming: bool, configuration: dict[str, str], *, collected: bool = False
) -> ph.PhysicalNode:
    """The Optimized Physical Plan of ``logical``; ``collected``: a query whose rows a sink that
    takes every kind collects (Flink's collect sink, a changelog stream), not EXPLAIN's plan."""
    rel = calc_conversion.apply(logical)
    if not streaming:
        # The batch planner splits OVER projections before it merges projections (fields keep
        # their names); the streaming one merges first and then derives a Rank.
        rel = over_window.apply(rel)
        rel = batch_rank.apply(rel)
    rel = calc_merge.apply(rel)
    rel = filter_into_join.apply(rel)
    rel = join_condition_push.apply(rel)
    rel = filter_aggregate_transpose.apply(rel)
    if streaming:
        # The batch planner filters the window table function's output instead.
        rel = filter_window_transpose.apply(rel)
    rel = aggregate_reduce_functions.apply(rel)
    rel = union_casts.apply(rel)
    rel = calc_merge.apply(rel)
    if streaming:
        rel = rank.apply(rel)
    rel = sort_project_transpose.apply(rel)
    rel = project_push_down.apply(rel)
    rel = calc_merge.apply(rel)
    rel = reduce_expressions.apply(rel)
    rel = calc_union_transpose.apply(rel)
    rel = aggregate_project_merge.apply(rel)
    rel = aggregate_remove.apply(rel)
    rel = calc_merge.apply(rel)
    rel = calc_remove.apply(rel)
    physical = to_physical.convert(rel, streaming, configuration)
    return changelog.apply(physical, collected) if streaming else physical
