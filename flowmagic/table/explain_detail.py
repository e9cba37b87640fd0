"""PyFlink's ``ExplainDetail``: what EXPLAIN adds to its three plans."""

from __future__ import annotations

from enum import Enum


class ExplainDetail(Enum):
    """The details ``explain_sql`` and ``Table.explain`` take."""

    ESTIMATED_COST = 0
    CHANGELOG_MODE = 1
    JSON_EXECUTION_PLAN = 2
    PLAN_ADVICE = 3
