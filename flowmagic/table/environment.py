"""PyFlink's ``TableEnvironment`` and ``StreamTableEnvironment`` over flowmagic's SQL session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowmagic.sql.session import SqlSession
from flowmagic.table.bridge import table_to_stream
from flowmagic.table.environment_settings import EnvironmentSettings
from flowmagic.table.explain_detail import ExplainDetail
from flowmagic.table.statement_set import StatementSet, run_statements
from flowmagic.table.table import Table
from flowmagic.table.table_config import TableConfig
from flowmagic.table.table_result import TableResult

if TYPE_CHECKING:
    from flowmagic.api.datastream import DataStream
    from flowmagic.api.environment import StreamExecutionEnvironment


class TableEnvironment:
    """Plans SQL as Flink 2.3's table environment does: DDL into its catalog, EXPLAIN of queries."""

    def __init__(self, settings: EnvironmentSettings) -> None:
        self._settings = settings
        self.session = SqlSession(settings.is_streaming_mode())
        self._config = TableConfig(self.session.configuration)

    @classmethod
    def create(cls, environment_settings: EnvironmentSettings | None = None) -> TableEnvironment:
        """A fresh environment (fresh catalog and id counters), streaming unless told otherwise."""
        return cls(environment_settings or EnvironmentSettings.in_streaming_mode())

    def get_config(self) -> TableConfig:
        return self._config

    def execute_sql(self, stmt: str) -> TableResult:
        """Carry out one statement: CREATE/DROP TABLE or VIEW, SET, SHOW TABLES, DESCRIBE,
        EXPLAIN; a query or an INSERT submits its job and returns at once (``wait()``,
        ``collect()`` and ``print()`` follow it)."""
        if self.session.runs_job(stmt):
            return run_statements(self, [stmt])
        result = self.session.execute(stmt)
        return TableResult(result.kind, result.columns, result.rows)

    def create_statement_set(self) -> StatementSet:
        """A set of INSERTs that ``execute()`` runs as one job."""
        return StatementSet(self)

    def explain_sql(self, stmt: str, *extra_details: ExplainDetail) -> str:
        """``EXPLAIN`` of a query or INSERT, with the given details."""
        return self.session.explain(stmt, tuple(d.name for d in extra_details))

    def sql_query(self, query: str) -> Table:
        """The query as a Table (validated now, as Flink validates it)."""
        self.session.plan(query)
        return Table(self, query)

    def list_tables(self) -> list[str]:
        return self.session.catalog.names()


class StreamTableEnvironment(TableEnvironment):
    """A table environment over a flowmagic ``StreamExecutionEnvironment``."""

    def __init__(self, settings: EnvironmentSettings, env: StreamExecutionEnvironment | None = None) -> None:
        super().__init__(settings)
        # Statements are translated into the user's environment, continuing its id counter.
        self.session = SqlSession(settings.is_streaming_mode(), env=env)
        self._config = TableConfig(self.session.configuration)

    @classmethod
    def create(  # type: ignore[override]
        cls,
        stream_execution_environment: StreamExecutionEnvironment | None = None,
        environment_settings: EnvironmentSettings | None = None,
    ) -> StreamTableEnvironment:
        settings = environment_settings or EnvironmentSettings.in_streaming_mode()
        return cls(settings, stream_execution_environment)

    def to_changelog_stream(self, table: Table) -> DataStream:
        """The table's rows as a DataStream of ``Row`` objects, each with its kind
        (``get_row_kind()``: ``+I``, ``-U``, ``+U``, ``-D``)."""
        return table_to_stream(self, table, changelog=True)

    def to_data_stream(self, table: Table) -> DataStream:
        """An insert-only table's rows as a DataStream of ``Row`` objects; an updating table
        is refused, as Flink refuses it (use :meth:`to_changelog_stream`)."""
        return table_to_stream(self, table, changelog=False)
