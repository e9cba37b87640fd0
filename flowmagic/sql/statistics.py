"""The estimates Flink's batch cost model reads: how many rows a physical node emits and how many
distinct values a set of its fields holds (Flink's ``FlinkRelMdRowCount`` and
``FlinkRelMdDistinctRowCount``, with Calcite's ``RelMdUtil`` formulas they call).

A table scan counts the rows its connector reports (a csv file's estimate) or Flink's default of
10^8 rows, and no distinct-value figures; VALUES counts its rows. ``None`` is "unknown", as Calcite's null: an
aggregate then assumes Flink's aggregation ratio instead."""

from __future__ import annotations

import math
from collections.abc import Iterable

from flowmagic.sql import physical as ph
from flowmagic.sql.rex import Call, InputRef, Literal, Rex, conjunctions

#: A table's row count when the catalog knows none (``FlinkPreparingTableBase``).
DEFAULT_ROW_COUNT = 1e8
#: ``table.optimizer.rows-per-local-agg``: rows one local aggregate is expected to take.
ROWS_PER_LOCAL_AGG = 1_000_000

_COMPARISONS = {"<>", "<", ">", "<=", ">=", "IS DISTINCT FROM", "IS NOT DISTINCT FROM"}


def guess_selectivity(predicates: Iterable[Rex]) -> float:
    """Calcite's default selectivity of a conjunction (``RelMdUtil.guessSelectivity``)."""
    selectivity = 1.0
    for predicate in predicates:
        operator = predicate.operator if isinstance(predicate, Call) else ""
        if operator == "IS NOT NULL":
            selectivity *= 0.9
        elif operator == "=":
            selectivity *= 0.15
        elif operator in _COMPARISONS:
            selectivity *= 0.5
        else:
            selectivity *= 0.25
    return selectivity


def selectivity(predicates: Iterable[Rex]) -> float:
    """The share of rows a conjunction keeps, as Flink's ``SelectivityEstimator`` judges it
    without column statistics: 0.15 for ``=``, 0.85 for ``<>``, 0.5 for an ordering, 0.1 for
    IS NULL, 0.05 for LIKE, 0.25 for anything else; NOT, AND and OR combine them."""
    share = 1.0
    for predicate in predicates:
        share *= _estimate(predicate)
    return share


def _estimate(rex: Rex) -> float:
    if isinstance(rex, Literal) and isinstance(rex.value, bool):
        return 1.0 if rex.value else 0.0
    if isinstance(rex, InputRef) and rex.type.name == "BOOLEAN":
        return 0.15
    if not isinstance(rex, Call):
        return 0.25
    operator = rex.operator
    if operator == "AND":
        return selectivity(rex.operands)
    if operator == "OR":
        shares = [_estimate(o) for o in rex.operands]
        return min(1.0, sum(shares) - math.prod(shares))
    if operator == "NOT":
        return 1.0 - _estimate(rex.operands[0])
    return _SINGLE.get(operator, 0.25)


_SINGLE = {
    "=": 0.15,
    "<>": 0.85,
    "<": 0.5,
    "<=": 0.5,
    ">": 0.5,
    ">=": 0.5,
    "IS NULL": 0.1,
    "IS NOT NULL": 0.9,
    "LIKE": 0.05,
}


def distinct_values(domain: float | None, selected: float | None) -> float | None:
    """How many distinct values ``selected`` draws from ``domain`` equally likely ones hit
    (Flink's ``FlinkRelMdUtil.numDistinctVals``: Calcite's exact formula, its approximation
    for domains below one or beyond 10^9)."""
    if domain is None or selected is None:
        return domain
    if domain < 1 or abs(1 / domain) < 1e-9:
        result = (1.0 - math.exp(-selected / domain)) * domain if domain > 0 else 0.0
    else:
        result = -math.expm1(selected * math.log1p(-1.0 / domain)) * domain if domain > 1 else 1.0
    return max(0.0, min(result, domain, selected))


def aggregation_ratio(keys: int) -> float:
    """Output rows per input row of an aggregate whose keys' distinct values are unknown."""
    return 1.0 - math.exp(-0.1 * keys)


def local_aggregate_rows(parallelism: int, input_rows: float, global_rows: float) -> float:
    """Rows out of ``parallelism`` local aggregates, each seeing an even share of the input."""
    return min((1 - (1 - 1.0 / parallelism) ** (input_rows / global_rows)) * global_rows * parallelism, input_rows)


def row_count(node: ph.PhysicalNode) -> float:
    """The rows ``node`` is estimated to emit (``RelMetadataQuery.getRowCount``)."""
    if isinstance(node, ph.TableSourceScan):
        return DEFAULT_ROW_COUNT if node.row_count is None else float(node.row_count)
    if isinstance(node, ph.Values):
        return float(len(node.rows))
    if isinstance(node, ph.Union):
        return sum(row_count(i) for i in node.inputs)
    if isinstance(node, ph.Calc):
        predicates = conjunctions(node.condition) if node.condition is not None else []
        return row_count(node.inputs[0]) * selectivity(predicates)
    if isinstance(node, ph.Expand):
        return row_count(node.inputs[0]) * len(node.projects)
    if isinstance(node, ph.BatchAggregate):
        return _aggregate_rows(node)
    if isinstance(node, ph.SortLimit):
        return min(float(node.fetch), max(row_count(node.inputs[0]) - node.offset, 0.0))
    if isinstance(node, ph.HashJoin | ph.NestedLoopJoin):
        return _join_rows(node)
    if node.inputs:
        return row_count(node.inputs[0])
    return DEFAULT_ROW_COUNT


def _aggregate_rows(node: ph.BatchAggregate) -> float:
    """``FlinkRelMdRowCount.getRowCountOfBatchExecAgg``."""
    source = node.inputs[0]
    input_rows = row_count(source)
    merging = not node.local and node.merge
    if not node.grouping:
        groups = 1.0
    else:
        distinct = distinct_row_count(source, node.grouping)
        if distinct is not None:
            groups = min(distinct, input_rows)
        elif merging:
            # The local phase below already applied the ratio.
            groups = input_rows
        else:
            groups = input_rows * aggregation_ratio(len(node.grouping))
    if not node.local:
        return groups
    parallelism = int(input_rows / ROWS_PER_LOCAL_AGG + 1)
    if parallelism == 1:
        return groups
    if not node.grouping:
        return float(parallelism)
    if distinct_row_count(source, node.grouping) is None:
        return groups
    return local_aggregate_rows(parallelism, input_rows, groups)


def _join_rows(node: ph.HashJoin | ph.NestedLoopJoin) -> float:
    """A join's rows (``FlinkRelMdRowCount.getRowCount`` of a Join): an equi-join's inner rows
    from its keys' distinct values where known, else both inputs' rows times the condition's
    selectivity; an outer join keeps at least its outer side's rows."""
    left, right = (row_count(i) for i in node.inputs)
    parts = conjunctions(node.condition) if node.condition is not None else []
    pairs = _key_pairs(parts, len(node.inputs[0].fields))
    if not pairs:
        inner = left * right * selectivity(parts)
    else:
        left_distinct = distinct_row_count(node.inputs[0], [a for a, _ in pairs])
        right_distinct = distinct_row_count(node.inputs[1], [b for _, b in pairs])
        if left_distinct is not None and right_distinct is not None:
            most = max(left_distinct, right_distinct)
            inner = left * right * (1.0 if most <= 1.0 else 1.0 / most)
        else:
            inner = (left + right) * selectivity(parts)
    if node.join_type == "left":
        return max(left, inner)
    if node.join_type == "right":
        return max(right, inner)
    if node.join_type == "full":
        return max(left, inner) + max(right, inner) - inner
    return inner


def _key_pairs(parts: list[Rex], width: int) -> list[tuple[int, int]]:
    """The (left field, right field) pairs of a join condition's ``=`` conjunctions."""
    pairs = []
    for part in parts:
        if isinstance(part, Call) and part.operator == "=":
            a, b = part.operands
            if isinstance(a, InputRef) and isinstance(b, InputRef):
                low, high = sorted((a.index, b.index))
                if low < width <= high:
                    pairs.append((low, high - width))
    return pairs


def distinct_row_count(node: ph.PhysicalNode, keys: Iterable[int], predicates: tuple[Rex, ...] = ()) -> float | None:
    """How many distinct values fields ``keys`` of ``node`` hold among the rows passing
    ``predicates`` (``RelMetadataQuery.getDistinctRowCount``); None when unknown."""
    key = tuple(sorted(set(keys)))
    if not key and not predicates:
        return 1.0
    if isinstance(node, ph.TableSourceScan):
        # No column statistics: only the empty key is known, one value however many rows pass.
        return 1.0 if not key else None
    if isinstance(node, ph.Values):
        half = row_count(node) / 2
        return distinct_values(half, half * guess_selectivity(predicates))
    if isinstance(node, ph.Calc):
        return _calc_distinct(node, key, predicates)
    if isinstance(node, ph.Exchange):
        return distinct_row_count(node.inputs[0], key, predicates)
    if isinstance(node, ph.Sort):
        found = distinct_row_count(node.inputs[0], key, predicates)
        return None if found is None else min(found, row_count(node))
    if isinstance(node, ph.Union):
        total = 0.0
        for source in node.inputs:
            part = distinct_row_count(source, key, predicates)
            if part is None:
                return None
            total += part
        return total
    if isinstance(node, ph.Expand):
        return _expand_distinct(node, key, predicates)
    if isinstance(node, ph.BatchAggregate):
        if not key:
            return 1.0
        if not node.local and node.merge:
            return distinct_row_count(node.inputs[0], key, predicates)
        return _aggregate_distinct(node, key, predicates)
    return None


def _calc_distinct(node: ph.Calc, key: tuple[int, ...], predicates: tuple[Rex, ...]) -> float | None:
    """``FlinkRelMdDistinctRowCount`` of a Calc: the plain fields' count below, times the
    cardinality of each computed one."""
    base = sorted({p.index for k in key if isinstance(p := node.projects[k], InputRef)})
    computed = [node.projects[k] for k in key if not isinstance(node.projects[k], InputRef)]
    own = conjunctions(node.condition) if node.condition is not None else []
    distinct = distinct_row_count(node.inputs[0], base, (*own, *predicates))
    if distinct is None or not computed:
        return distinct
    for rex in computed:
        cardinality = _cardinality(node, rex)
        if cardinality is None:
            return None
        distinct *= cardinality
    return distinct_values(distinct, row_count(node))


def _cardinality(node: ph.Calc, rex: Rex) -> float | None:
    """Distinct values of an expression a Calc computes (Calcite's ``CardOfProjExpr``)."""
    rows = row_count(node)
    if isinstance(rex, InputRef):
        return distinct_values(distinct_row_count(node.inputs[0], (rex.index,)), rows)
    if isinstance(rex, Literal):
        return distinct_values(1.0, rows)
    if not isinstance(rex, Call):
        return None
    operands = rex.operands
    found: float | None
    if rex.operator in ("+", "-", "*", "/") and len(operands) == 2:
        first, second = (_cardinality(node, o) for o in operands)
        if first is None or second is None:
            return None
        found = max(first, second) if rex.operator in ("+", "-") else first * second
    elif len(operands) == 1:
        found = _cardinality(node, operands[0])
    else:
        found = rows / 10
    return distinct_values(found, rows)


def _expand_distinct(node: ph.Expand, key: tuple[int, ...], predicates: tuple[Rex, ...]) -> float | None:
    """An Expand's distinct rows: per projection when the expand id is a key, summed."""
    expand_id = next(i for i, f in enumerate(node.fields) if f.name == "$e")
    if expand_id not in key:
        return distinct_row_count(node.inputs[0], key, predicates)
    total = 0.0
    for projects in node.projects:
        below = [p.index for k in key if k != expand_id and isinstance(p := projects[k], InputRef)]
        part = distinct_row_count(node.inputs[0], below, predicates)
        if part is None:
            return None
        total += part
    return total


def _aggregate_distinct(node: ph.BatchAggregate, key: tuple[int, ...], predicates: tuple[Rex, ...]) -> float | None:
    """``getDistinctRowCountOfAggregate``: the keys' count below, times a guess per aggregate
    result among the fields (the square root of twice the rows for a COUNT, a tenth of its
    argument's values otherwise)."""
    if predicates:
        return None
    width = len(node.grouping)
    every_key = all(i in key for i in range(width))
    below = [node.grouping[k] for k in key if k < width]
    calls = [] if every_key else [node.calls[k - width] for k in key if k >= width]
    source = node.inputs[0]
    distinct = distinct_row_count(source, below)
    if distinct is None:
        return None
    input_rows = row_count(source)
    for call in calls:
        if call.function == "COUNT":
            values = math.sqrt(2.0 * input_rows)
        else:
            if not call.args:
                return None
            argument = distinct_row_count(source, call.args)
            if argument is None:
                return None
            values = argument * 0.1
        distinct *= max(values, 1.0)
    return min(distinct, input_rows)
