"""PyFlink's ``Table`` of a query: its plans now, its rows with SQL part 2."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowmagic.sql.errors import TableException
from flowmagic.sql.session import RUN_LATER
from flowmagic.table.explain_detail import ExplainDetail

if TYPE_CHECKING:
    from flowmagic.table.environment import TableEnvironment


class Table:
    """The result of ``sql_query``: a planned query."""

    def __init__(self, t_env: TableEnvironment, query: str) -> None:
        self._t_env = t_env
        self._query = query

    def explain(self, *extra_details: ExplainDetail) -> str:
        """The query's EXPLAIN text (Abstract Syntax Tree, Optimized Physical and Execution Plans)."""
        return self._t_env.explain_sql(self._query, *extra_details)

    def get_schema(self) -> list[tuple[str, str]]:
        """(column name, Flink type) of the query's result."""
        return self._t_env.session.result_schema(self._query)

    def execute(self) -> None:
        raise TableException(RUN_LATER)

    def execute_insert(self, table_path: str, overwrite: bool = False) -> None:
        raise TableException(RUN_LATER)
