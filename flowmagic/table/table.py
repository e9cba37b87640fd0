"""PyFlink's ``Table`` of a query: its plans, and its rows when executed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowmagic.sql.errors import TableException
from flowmagic.table.explain_detail import ExplainDetail
from flowmagic.table.statement_set import run_statements
from flowmagic.table.table_result import TableResult

if TYPE_CHECKING:
    from flowmagic.table.environment import TableEnvironment


class Table:
    """The result of ``sql_query``: a planned query."""

    def __init__(self, t_env: TableEnvironment, query: str) -> None:
        self._t_env = t_env
        self._query = query

    @property
    def query(self) -> str:
        """The query this table is the result of."""
        return self._query

    def explain(self, *extra_details: ExplainDetail) -> str:
        """The query's EXPLAIN text (Abstract Syntax Tree, Optimized Physical and Execution Plans)."""
        return self._t_env.explain_sql(self._query, *extra_details)

    def get_schema(self) -> list[tuple[str, str]]:
        """(column name, Flink type) of the query's result."""
        return self._t_env.session.result_schema(self._query)

    def execute(self) -> TableResult:
        """Run the query: its rows come with the result (``print()``, ``collect()``)."""
        return run_statements(self._t_env, [self._query])

    def execute_insert(self, table_path: str, overwrite: bool = False) -> TableResult:
        """``INSERT INTO table_path`` the query's rows."""
        if overwrite:
            raise TableException("INSERT OVERWRITE is not supported by flowmagic's SQL runtime yet.")
        return self._t_env.execute_sql(f"INSERT INTO {table_path} {self._query}")
