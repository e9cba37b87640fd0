"""The connector of a table a query reads or writes, as the planner sees it.

The runtime's connector registry (:mod:`flowmagic.runtime.connectors.factories`) is the one
place that knows each connector's options and Flink's words for bad ones: a table's options
are checked there when a query reads or writes the table (CREATE TABLE stores them unchecked,
as Flink does), and the planner keeps what it needs of the source or sink made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flowmagic.runtime.connectors.factories import Column, TableContext, create_table_sink, create_table_source


@dataclass(frozen=True)
class ConnectorTraits:
    """What the planner needs to know of a table's connector."""

    identifier: str
    bounded: bool
    projection_push_down: bool
    filter_push_down: bool
    #: The rows the source reports to the batch cost model (None: unknown).
    row_count: int | None = None
    #: The kinds of rows a sink consumes (``I``, ``UB``, ``UA``, ``D``).
    changelog_mode: tuple[str, ...] = ()


def validate(
    table: str, options: Mapping[str, str], columns: Sequence[tuple[str, str]], source: bool
) -> ConnectorTraits:
    """The traits of the table's connector (``columns``: its physical columns' names and Flink
    types), read as a source (``source``) or written as a sink, its options checked; Flink's
    ``ValidationException`` otherwise: which table, its options, and the cause."""
    context = TableContext(table, tuple(Column(name, type_text) for name, type_text in columns), options)
    if source:
        made = create_table_source(context)
        return ConnectorTraits(
            options["connector"], made.bounded, made.projection_push_down, made.filter_push_down, made.row_count
        )
    made_sink = create_table_sink(context)
    return ConnectorTraits(
        options["connector"],
        bounded=True,
        projection_push_down=False,
        filter_push_down=False,
        changelog_mode=made_sink.changelog_mode,
    )
