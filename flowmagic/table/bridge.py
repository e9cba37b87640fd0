"""A ``StreamTableEnvironment``'s tables as DataStreams: ``to_changelog_stream`` (every row
with its kind) and ``to_data_stream`` (insert-only tables), as Flink's ``TableToDataSteam``
conversion after the table's last operator: SQL rows (tuples, their kind last) become
``Row`` objects with their field names and ``get_row_kind()``."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flowmagic.graph.operator_params import FunctionParams
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.graph.transformations import OneInputTransformation
from flowmagic.sql import physical as ph
from flowmagic.sql import tree
from flowmagic.sql.errors import TableException
from flowmagic.sql.optimize import optimize
from flowmagic.vocabulary.types import Row, RowKind

if TYPE_CHECKING:
    from flowmagic.api.datastream import DataStream
    from flowmagic.table.environment import StreamTableEnvironment
    from flowmagic.table.table import Table

__all__ = ["RowsOfTable", "table_to_stream"]

_KINDS = (RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE)
_UPDATES = ("UB", "UA", "D")
#: Flink numbers anonymous tables (a DataStream's source or sink) with one counter per process.
_ANONYMOUS = itertools.count(1)


@dataclass(frozen=True)
class RowsOfTable:
    """The conversion's function: a SQL row (values, then its kind) into a ``Row``."""

    names: tuple[str, ...]

    def __call__(self, record: tuple[Any, ...]) -> Row:
        row = Row(*record[:-1])
        row.set_field_names(list(self.names))
        row.set_row_kind(_KINDS[record[-1]])
        return row


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
    plan = session.translate(query, collect=False)
    root = plan.translation.sink
    names = tuple(f.name for f in plan.logical.fields)
    types = ", ".join(f"{f.name} {f.type.flink()}" for f in plan.logical.fields)
    env = session.env
    conversion = OneInputTransformation(
        id=env.new_id(),
        name=f"TableToDataSteam(type=ROW<{types}> NOT NULL, rowtime=false, watermark=false)",
        parallelism=root.parallelism,
        inputs=[root],
        parallelism_configured=root.parallelism_configured,
        operator=OperatorSpec(OperatorKind.MAP, FunctionParams(function=RowsOfTable(names))),
    )
    env.add_operator(conversion)
    return DataStream(env, conversion)
