"""The errors of Flink's SQL layer, with the class names Flink gives them."""

from __future__ import annotations

from flowmagic.errors import FlowError


class SqlParserException(FlowError):
    """SQL text Flink's parser rejects (``org.apache.flink.table.api.SqlParserException``)."""


class ValidationException(FlowError):
    """A statement that parses but is invalid: an unknown table, column, option or connector."""


class TableException(FlowError):
    """A valid statement the table environment cannot carry out (Flink's ``TableException``)."""
