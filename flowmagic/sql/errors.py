"""The errors of Flink's SQL layer, with the class names Flink gives them (``ValidationException``
is flowmagic's one, which the runtime's connectors raise too)."""

from __future__ import annotations

from flowmagic.errors import FlowError, ValidationException

__all__ = ["SqlParserException", "TableException", "ValidationException"]


class SqlParserException(FlowError):
    """SQL text Flink's parser rejects (``org.apache.flink.table.api.SqlParserException``)."""


class TableException(FlowError):
    """A valid statement the table environment cannot carry out (Flink's ``TableException``)."""
