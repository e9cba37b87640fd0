"""PyFlink's ``Schema``: the columns a table made from a DataStream declares
(``Schema.new_builder().column(...).column_by_expression(...).column_by_metadata(...)
.watermark(...).build()``), types and expressions as SQL text, resolved when the stream
becomes a table (:mod:`flowmagic.table.bridge`)."""

from __future__ import annotations

from dataclasses import dataclass

from flowmagic.sql.errors import ValidationException

__all__ = ["ResolvedSchema", "Schema", "UnresolvedColumn"]


@dataclass(frozen=True)
class UnresolvedColumn:
    """A declared column: physical (``type``), computed (``expression``) or metadata
    (``type`` and ``metadata_key``)."""

    name: str
    type: str | None = None
    expression: str | None = None
    metadata_key: str | None = None
    metadata: bool = False


class Schema:
    """A table's declared columns and watermark, as Flink's ``Schema`` holds them unresolved."""

    class Builder:
        """``Schema.new_builder()``: columns in their declared order, then ``build()``."""

        def __init__(self) -> None:
            self._columns: list[UnresolvedColumn] = []
            self._watermark: tuple[str, str] | None = None

        def _add(self, column: UnresolvedColumn) -> Schema.Builder:
            if not isinstance(column.name, str) or not column.name:
                raise ValidationException(f"A column name must be a non-empty string, got {column.name!r}.")
            self._columns.append(column)
            return self

        def column(self, column_name: str, data_type: str) -> Schema.Builder:
            """A physical column of ``data_type`` (SQL text such as ``'BIGINT NOT NULL'``)."""
            return self._add(UnresolvedColumn(column_name, type=_type_text(data_type, column_name)))

        def column_by_expression(self, column_name: str, expr: str) -> Schema.Builder:
            """A computed column: ``expr`` (SQL text) over the other columns."""
            if not isinstance(expr, str):
                raise ValidationException(f"The expression of column '{column_name}' must be SQL text, got {expr!r}.")
            return self._add(UnresolvedColumn(column_name, expression=expr))

        def column_by_metadata(
            self,
            column_name: str,
            data_type: str,
            metadata_key: str | None = None,
            is_virtual: bool = False,
        ) -> Schema.Builder:
            """A metadata column: of a DataStream, ``rowtime`` (the record's timestamp)."""
            return self._add(
                UnresolvedColumn(
                    column_name, type=_type_text(data_type, column_name), metadata_key=metadata_key, metadata=True
                )
            )

        def watermark(self, column_name: str, watermark_expr: str) -> Schema.Builder:
            """The watermark of the rowtime column ``column_name``: an expression, or
            ``SOURCE_WATERMARK()`` for the DataStream's own watermarks."""
            if self._watermark is not None:
                raise ValidationException("Multiple watermark definitions are not supported yet.")
            self._watermark = (column_name, watermark_expr)
            return self

        def build(self) -> Schema:
            return Schema(tuple(self._columns), self._watermark)

    def __init__(self, columns: tuple[UnresolvedColumn, ...] = (), watermark: tuple[str, str] | None = None) -> None:
        self.columns = columns
        self.watermark = watermark

    @staticmethod
    def new_builder() -> Schema.Builder:
        return Schema.Builder()

    def __repr__(self) -> str:
        parts = []
        for c in self.columns:
            if c.expression is not None:
                parts.append(f"`{c.name}` AS [{c.expression}]")
            elif c.metadata:
                key = f" FROM '{c.metadata_key}'" if c.metadata_key else ""
                parts.append(f"`{c.name}` METADATA {c.type}{key}")
            else:
                parts.append(f"`{c.name}` {c.type}")
        if self.watermark is not None:
            parts.append(f"WATERMARK FOR `{self.watermark[0]}` AS [{self.watermark[1]}]")
        return "(\n  " + ",\n  ".join(parts) + "\n)"


class ResolvedSchema:
    """A table's resolved columns (name, Flink type, what else Flink prints of the column:
    ``METADATA``, ``AS expression``) and its watermark, printed as Flink prints them."""

    def __init__(self, columns: list[tuple[str, str, str]], watermark: tuple[str, str, str] | None = None) -> None:
        self._columns = columns
        self._watermark = watermark

    def get_column_names(self) -> list[str]:
        return [name for name, _, _ in self._columns]

    def get_column_data_types(self) -> list[str]:
        return [type_text for _, type_text, _ in self._columns]

    def __str__(self) -> str:
        lines = [f"`{name}` {type_text}{' ' + extra if extra else ''}" for name, type_text, extra in self._columns]
        if self._watermark is not None:
            column, type_text, expression = self._watermark
            lines.append(f"WATERMARK FOR `{column}`: {type_text} AS {expression}")
        return "(\n  " + ",\n  ".join(lines) + "\n)"

    __repr__ = __str__


def _type_text(data_type: object, column: str) -> str:
    if not isinstance(data_type, str):
        raise ValidationException(
            f"The data type of column '{column}' must be SQL text such as 'BIGINT', got {data_type!r}."
        )
    return data_type
