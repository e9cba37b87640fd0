"""A ``StreamTableEnvironment``'s bridges between tables and DataStreams.

Tables as DataStreams: ``to_changelog_stream`` (every row with its kind) and
``to_data_stream`` (insert-only tables), as Flink's ``TableToDataStream`` conversion after
the table's last operator: SQL rows (tuples, their kind last) become ``Row`` objects with
their field names and ``get_row_kind()``.

DataStreams as tables: ``from_data_stream`` and ``create_temporary_view(name, stream)``, as
Flink's ExternalQueryOperation: the columns derived from the stream's type information
(a named row's fields; a tuple's ``f0, f1, ...``; any other type one column ``f0``), then
a ``Schema``'s declared columns, computed columns, the ``rowtime`` metadata column (each
record's timestamp) and its watermark (``SOURCE_WATERMARK()``: the stream's own). The table
is registered in the catalog; its scan reads the stream's transformation (see
:mod:`flowmagic.sql.translate`).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from sqlglot import exp

from flowmagic.graph.operator_params import FunctionParams
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.graph.transformations import OneInputTransformation
from flowmagic.sql import catalog as cat
from flowmagic.sql import physical as ph
from flowmagic.sql import tree
from flowmagic.sql.codegen import runtime_type
from flowmagic.sql.dialect import Flink, parse_statement
from flowmagic.sql.errors import SqlParserException, TableException, ValidationException
from flowmagic.sql.optimize import optimize
from flowmagic.sql.to_rel import sql_type
from flowmagic.sql.types import SqlType
from flowmagic.table.rows import RowsOfTable
from flowmagic.table.schema import ResolvedSchema, Schema
from flowmagic.vocabulary.types import PICKLED, TypeInformation, is_tuple_type

if TYPE_CHECKING:
    from flowmagic.api.datastream import DataStream
    from flowmagic.table.environment import StreamTableEnvironment, TableEnvironment
    from flowmagic.table.table import Table

__all__ = ["resolved_schema", "stream_to_table", "table_to_stream"]

_UPDATES = ("UB", "UA", "D")
#: Flink numbers anonymous tables (a DataStream's source or sink) with one counter per process.
_ANONYMOUS = itertools.count(1)
#: Flink's data type of each DataStream field type flowmagic's SQL reads (as PyFlink's
#: ``Types`` name them); a tuple's field of a primitive Java type is NOT NULL.
_FIELD_TYPES = {
    "String": ("STRING", False),
    "Boolean": ("BOOLEAN", True),
    "Byte": ("TINYINT", True),
    "Short": ("SMALLINT", True),
    "Integer": ("INT", True),
    "Long": ("BIGINT", True),
    "Float": ("FLOAT", True),
    "Double": ("DOUBLE", True),
}
#: The one metadata key of a DataStream's table: each record's timestamp.
ROWTIME = "rowtime"


def _update_producer(node: ph.PhysicalNode) -> ph.PhysicalNode | None:
    """The node where updates first appear below ``node`` (None: it is insert-only)."""
    if not any(mode in node.changelog for mode in _UPDATES):
        return None
    for child in node.inputs:
        found = _update_producer(child)
        if found is not None:
            return found
    return node


def table_to_stream(t_env: StreamTableEnvironment, table: Table, *, changelog: bool) -> DataStream:
    """The DataStream of ``table``'s rows in ``t_env``'s execution environment; an updating
    table refuses ``to_data_stream`` with Flink's words."""
    from flowmagic.api.datastream import DataStream

    session = t_env.session
    query = table.query
    if not changelog:
        physical = optimize(session.plan(query).logical, session.streaming, session.configuration)
        producer = _update_producer(physical)
        if producer is not None:
            node = tree.call(producer.name(False), producer.terms("stream"))
            raise TableException(
                f"Table sink '*anonymous_datastream_sink${next(_ANONYMOUS)}*' doesn't support consuming "
                f"update changes which is produced by node {node}"
            )
    plan = session.translate(query, to_stream=True)
    root = plan.translation.sink
    names = tuple(f.name for f in plan.logical.fields)
    runtime_types = tuple(runtime_type(f.type) for f in plan.logical.fields)
    types = ", ".join(f"`{f.name}` {f.type.flink()}" for f in plan.logical.fields)
    env = session.env
    conversion = OneInputTransformation(
        id=env.new_id(),
        name="TableToDataStream",
        description=f"TableToDataStream(type=ROW<{types}> NOT NULL, rowtime=false)",
        parallelism=root.parallelism,
        inputs=[root],
        parallelism_configured=root.parallelism_configured,
        operator=OperatorSpec(OperatorKind.MAP, FunctionParams(function=RowsOfTable(names, runtime_types))),
    )
    env.add_operator(conversion)
    return DataStream(env, conversion)


def stream_to_table(
    t_env: StreamTableEnvironment,
    stream: DataStream,
    schema: Schema | None,
    name: str | None,
    *,
    changelog: bool = False,
) -> str:
    """Register ``stream`` as a table of ``t_env``'s catalog (temporary view ``name``, or an
    anonymous table) with its columns derived from the stream's type and ``schema``; the
    name it is registered under. ``changelog``: the stream's Rows carry their kinds
    (``from_changelog_stream``)."""
    if stream.get_execution_environment() is not t_env.session.env:
        raise ValidationException(
            "The DataStream's StreamExecutionEnvironment must be identical to the one that has been passed "
            "to the StreamTableEnvironment during instantiation."
        )
    anonymous = name is None
    short = (
        f"*anonymous_datastream_source${next(_ANONYMOUS)}*" if name is None else t_env.session.catalog.short_name(name)
    )
    identifier = short if anonymous else cat.qualified(short)
    type_info = stream.get_type()
    record, derived = _derived_columns(type_info, identifier)
    if changelog and record != "row":
        raise ValidationException(
            f"A changelog stream is a stream of Rows (Types.ROW_NAMED([...], [...])); the stream of table "
            f"'{identifier}' is of {type_info}."
        )
    columns, positions, rowtime, watermark = _declared_columns(derived, schema or Schema(), identifier)
    table = cat.CatalogDataStream(
        name=short,
        columns=columns,
        transformation=stream.transformation,
        record=record,
        identifier=identifier,
        watermark=watermark,
        rowtime=rowtime,
        positions=positions,
        changelog=changelog,
    )
    t_env.session.register_data_stream(table)
    return short


def _derived_columns(type_info: TypeInformation | None, identifier: str) -> tuple[str, list[cat.Column]]:
    """What a record is and the physical columns its type gives, as Flink derives them."""
    if type_info is None or type_info == PICKLED:
        raise ValidationException(
            f"The DataStream of table '{identifier}' has no declared type: a table needs its fields' types. "
            "Declare them where the stream is made (type_info=Types.ROW_NAMED([...], [...]) or "
            "output_type=...), as PyFlink needs them to convert records into rows."
        )
    if type_info.field_names is not None:
        names = list(type_info.field_names)
        return "row", [
            cat.Column(n, _field_type(t, identifier, nullable=True))
            for n, t in zip(names, type_info.fields, strict=True)
        ]
    if is_tuple_type(type_info):
        return "tuple", [cat.Column(f"f{i}", _field_type(t, identifier)) for i, t in enumerate(type_info.fields)]
    return "atomic", [cat.Column("f0", _field_type(type_info, identifier))]


def _field_type(type_info: TypeInformation, identifier: str, nullable: bool = False) -> SqlType:
    known = _FIELD_TYPES.get(type_info.name)
    if known is None:
        raise ValidationException(
            f"flowmagic's SQL cannot read a DataStream field of type {type_info} yet (table '{identifier}'); "
            f"it reads {', '.join(_FIELD_TYPES)}."
        )
    text, primitive = known
    return _parse_type(text if nullable or not primitive else text + " NOT NULL", identifier)


def _parse_type(text: str, where: str) -> SqlType:
    """A Flink data type written as SQL (``BIGINT NOT NULL``)."""
    try:
        statement = parse_statement(f"CREATE TABLE t (c {text})")
        (column,) = statement.this.expressions
        kind = column.args.get("kind")
    except (SqlParserException, ValidationException, ValueError, AttributeError) as error:
        raise ValidationException(f"Invalid data type '{text}' in {where}: {error}") from error
    if not isinstance(column, exp.ColumnDef) or kind is None:
        raise ValidationException(f"Invalid data type '{text}' in {where}.")
    constraints = column.args.get("constraints") or []
    not_null = any(isinstance(c.args.get("kind"), exp.NotNullColumnConstraint) for c in constraints)
    return sql_type(kind, nullable=not not_null)


def _parse_expression(text: str, where: str) -> exp.Expr:
    try:
        return parse_statement(f"SELECT {text}").expressions[0]
    except (SqlParserException, ValidationException, ValueError) as error:
        raise ValidationException(f"Invalid SQL expression '{text}' in {where}: {error}") from error


def _declared_columns(
    derived: list[cat.Column], schema: Schema, identifier: str
) -> tuple[list[cat.Column], tuple[int, ...], str | None, tuple[str, exp.Expr] | None]:
    """The table's columns (physical, the rowtime metadata column, computed), which record
    field each physical column reads, the rowtime column and the watermark, as Flink's
    SchemaTranslator makes them of the derived columns and the declared ones."""
    by_name = {c.name: i for i, c in enumerate(derived)}
    declared_physical = [c for c in schema.columns if c.expression is None and not c.metadata]
    columns: list[cat.Column] = []
    positions: list[int] = []
    if not declared_physical:
        columns, positions = list(derived), list(range(len(derived)))
    rowtime = None
    for column in schema.columns:
        where = f"column '{column.name}' of table '{identifier}'"
        if column.expression is not None:
            columns.append(cat.Column(column.name, None, _parse_expression(column.expression, where)))
        elif column.metadata:
            key = column.metadata_key or column.name
            if key != ROWTIME:
                raise ValidationException(
                    f"Invalid metadata key '{key}' in column '{column.name}' of table '{identifier}'. The "
                    "DynamicTableSource class 'org.apache.flink.table.planner.connectors.ExternalDynamicSource' "
                    f"supports the following metadata keys for reading:\n{ROWTIME}"
                )
            assert column.type is not None
            rowtime = column.name
            columns.append(cat.Column(column.name, _parse_type(column.type, where)))
        else:
            index = by_name.get(column.name)
            if index is None:
                raise ValidationException(
                    f"Unable to find a field named '{column.name}' in the physical data type derived from the "
                    "given type information for schema declaration. Make sure that the type information is not "
                    "a generic raw type and the schema is declared correctly. Requested field: "
                    f"{column.name}, Available fields: [{', '.join(c.name for c in derived)}]"
                )
            assert column.type is not None
            columns.append(cat.Column(column.name, _parse_type(column.type, where)))
            positions.append(index)
    watermark = None
    if schema.watermark is not None:
        column_name, text = schema.watermark
        if all(c.name != column_name for c in columns):
            raise ValidationException(
                f"Invalid column name '{column_name}' for rowtime attribute in watermark declaration. "
                f"Available columns are: [{', '.join(c.name for c in columns)}]"
            )
        watermark = (column_name, _parse_expression(text, f"the watermark of table '{identifier}'"))
    return columns, tuple(positions), rowtime, watermark


def resolved_schema(t_env: TableEnvironment, query: str, name: str | None) -> ResolvedSchema:
    """The schema of a table: of a DataStream's table (``name``) its columns as declared, with
    their kinds and the watermark; of any other its query's columns."""
    session = t_env.session
    table = session.catalog.lookup(name) if name is not None else None
    fields = session.plan(query).logical.fields
    if not isinstance(table, cat.CatalogDataStream):
        return ResolvedSchema([(f.name, f.type.flink(), "") for f in fields])
    columns = []
    for column, f in zip(table.columns, fields, strict=True):
        extra = "METADATA" if column.name == table.rowtime else ""
        if column.expression is not None:
            extra = f"AS {column.expression.sql(dialect=Flink)}"
        columns.append((column.name, f.type.flink(), extra))
    watermark = None
    if table.watermark is not None:
        column_name, expression = table.watermark
        rowtime_type = next(f.type for f in fields if f.name == column_name)
        watermark = (column_name, rowtime_type.without_time_attribute().flink(), expression.sql(dialect=Flink))
    return ResolvedSchema(columns, watermark)
