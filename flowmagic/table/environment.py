"""PyFlink's ``TableEnvironment`` and ``StreamTableEnvironment`` over flowmagic's SQL session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowmagic.sql import catalog as cat
from flowmagic.sql.errors import ValidationException
from flowmagic.sql.session import SqlSession
from flowmagic.table.bridge import stream_to_table, table_to_stream
from flowmagic.table.environment_settings import EnvironmentSettings
from flowmagic.table.explain_detail import ExplainDetail
from flowmagic.table.schema import Schema
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
        self._unnamed = 0

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

    def from_path(self, path: str) -> Table:
        """The table or view registered under ``path``."""
        if self.session.catalog.lookup(path) is None:
            raise ValidationException(f"Table {cat.qualified(path)} was not found.")
        return Table(self, f"SELECT * FROM {_quoted(path)}", path)

    def register_unnamed(self, query: str) -> str:
        """Register ``query`` as the next ``UnnamedTable$N`` temporary view (PyFlink's
        ``str(table)``); its name."""
        name = f"UnnamedTable${self._unnamed}"
        self._unnamed += 1
        self.session.execute(f"CREATE TEMPORARY VIEW {_quoted(name)} AS {query}")
        return name

    def create_temporary_view(self, view_path: str, table: Table) -> None:
        """Register ``table`` as the temporary view ``view_path``, for SQL to query."""
        if not isinstance(table, Table):
            raise ValidationException(
                f"create_temporary_view() of a {type(table).__name__} needs a StreamTableEnvironment "
                "(a TableEnvironment takes a Table)."
            )
        stream = self.session.catalog.lookup(table.name) if table.is_whole_table and table.name else None
        if isinstance(stream, cat.CatalogDataStream):
            self.session.catalog.create_temporary_alias(self.session.catalog.short_name(view_path), stream)
            return
        self.session.execute(f"CREATE TEMPORARY VIEW {_quoted(view_path)} AS {table.query}")


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

    def from_data_stream(self, data_stream: DataStream, *fields_or_schema: Schema) -> Table:
        """The DataStream as a table: columns derived from its type information (a named row's
        fields; a tuple's ``f0, f1, ...``; any other type one column ``f0``), or as a
        ``Schema`` declares them (physical columns by name, computed columns, the record's
        timestamp as a ``rowtime`` metadata column, a watermark such as
        ``SOURCE_WATERMARK()``). Insert-only, as in Flink."""
        name = stream_to_table(self, data_stream, _schema(fields_or_schema), None)
        return Table(self, f"SELECT * FROM {_quoted(name)}", name)

    def create_temporary_view(
        self, view_path: str, table_or_data_stream: Table | DataStream, *fields_or_schema: Schema
    ) -> None:
        """Register a Table, or a DataStream (see :meth:`from_data_stream`), as the temporary
        view ``view_path``, for SQL to query."""
        if isinstance(table_or_data_stream, Table):
            if fields_or_schema:
                raise ValidationException("create_temporary_view() of a Table takes no fields or schema.")
            super().create_temporary_view(view_path, table_or_data_stream)
            return
        stream_to_table(self, table_or_data_stream, _schema(fields_or_schema), view_path)

    def from_changelog_stream(self, data_stream: DataStream, schema: Schema | None = None) -> Table:
        """A stream of ``Row``s, each with its kind (``+I``, ``-U``, ``+U``, ``-D``), as the
        updating table it describes (columns as for :meth:`from_data_stream`)."""
        name = stream_to_table(self, data_stream, schema, None, changelog=True)
        return Table(self, f"SELECT * FROM {_quoted(name)}", name)

    def to_changelog_stream(self, table: Table) -> DataStream:
        """The table's rows as a DataStream of ``Row`` objects, each with its kind
        (``get_row_kind()``: ``+I``, ``-U``, ``+U``, ``-D``)."""
        return table_to_stream(self, table, changelog=True)

    def to_data_stream(self, table: Table) -> DataStream:
        """An insert-only table's rows as a DataStream of ``Row`` objects; an updating table
        is refused, as Flink refuses it (use :meth:`to_changelog_stream`)."""
        return table_to_stream(self, table, changelog=False)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _schema(fields_or_schema: tuple[object, ...]) -> Schema | None:
    """The one Schema given, if any; PyFlink's field expressions (the legacy form) flowmagic
    does not take."""
    if not fields_or_schema:
        return None
    if len(fields_or_schema) == 1 and isinstance(fields_or_schema[0], Schema):
        return fields_or_schema[0]
    raise ValidationException(
        f"Invalid arguments for 'fields': {fields_or_schema!r}; flowmagic takes one Schema "
        "(Schema.new_builder()...build()), not field expressions"
    )
