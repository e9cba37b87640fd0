"""PyFlink's ``Table`` of a query: its plans, and its rows when executed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowmagic.sql.errors import TableException
from flowmagic.table.bridge import resolved_schema
from flowmagic.table.explain_detail import ExplainDetail
from flowmagic.table.schema import ResolvedSchema
from flowmagic.table.statement_set import run_statements
from flowmagic.table.table_result import TableResult

if TYPE_CHECKING:
    from flowmagic.table.environment import TableEnvironment


class Table:
    """The result of ``sql_query``: a planned query."""

    def __init__(self, t_env: TableEnvironment, query: str, name: str | None = None) -> None:
        self._t_env = t_env
        self._query = query
        #: The catalog name of the table this one reads as a whole (``from_path``,
        #: ``from_data_stream``), if any.
        self._name = name

    @property
    def query(self) -> str:
        """The query this table is the result of."""
        return self._query

    @property
    def name(self) -> str | None:
        """The catalog name of the table this one reads as a whole, if any."""
        return self._name

    @property
    def is_whole_table(self) -> bool:
        """Whether this is a catalog table as a whole (``from_path``, ``from_data_stream``),
        not a query over it."""
        return self._name is not None and self._query == f"SELECT * FROM {self}"

    def explain(self, *extra_details: ExplainDetail) -> str:
        """The query's EXPLAIN text (Abstract Syntax Tree, Optimized Physical and Execution Plans)."""
        if self.is_whole_table:
            # The Table API's table itself: Flink explains its scan, without a projection.
            return self._t_env.session.explain(self._query, tuple(d.name for d in extra_details), whole_table=True)
        return self._t_env.explain_sql(self._query, *extra_details)

    def get_schema(self) -> list[tuple[str, str]]:
        """(column name, Flink type) of the query's result."""
        return self._t_env.session.result_schema(self._query)

    def get_resolved_schema(self) -> ResolvedSchema:
        """The table's columns as Flink resolves them (a DataStream's table: with its metadata
        and computed columns and its watermark)."""
        return resolved_schema(self._t_env, self._query, self._name)

    def __str__(self) -> str:
        """A name SQL can read the table by (``f"SELECT * FROM {table}"``): the table's own,
        else a temporary view registered for it, as PyFlink's ``UnnamedTable$N``."""
        if self._name is None:
            self._name = self._t_env.register_unnamed(self._query)
        return "`" + self._name.replace("`", "``") + "`"

    def execute(self) -> TableResult:
        """Run the query: its rows come with the result (``print()``, ``collect()``)."""
        return run_statements(self._t_env, [self._query])

    def execute_insert(self, table_path: str, overwrite: bool = False) -> TableResult:
        """``INSERT INTO table_path`` the query's rows."""
        if overwrite:
            raise TableException("INSERT OVERWRITE is not supported by flowmagic's SQL runtime yet.")
        return self._t_env.execute_sql(f"INSERT INTO {table_path} {self._query}")
