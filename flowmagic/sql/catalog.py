"""Flink's in-memory catalog: ``default_catalog.default_database``, its permanent and temporary
tables and views (temporary objects shadow permanent ones of the same name)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from flowmagic.sql.errors import ValidationException
from flowmagic.sql.types import SqlType

CATALOG = "default_catalog"
DATABASE = "default_database"


@dataclass(frozen=True)
class Column:
    """A column; computed columns hold their expression (``k AS CONCAT(...)``)."""

    name: str
    type: SqlType | None
    expression: exp.Expr | None = None


@dataclass
class CatalogTable:
    name: str
    columns: list[Column]
    options: dict[str, str]
    watermark: tuple[str, exp.Expr] | None = None
    primary_key: tuple[str, ...] = ()

    @property
    def physical(self) -> list[Column]:
        return [c for c in self.columns if c.expression is None]


@dataclass
class CatalogView:
    name: str
    query: exp.Expr
    columns: list[str] = field(default_factory=list)


@dataclass
class CatalogDataStream:
    """A DataStream as a table (``from_data_stream``, ``create_temporary_view(name, stream)``):
    Flink's ExternalQueryOperation. Its scan reads the stream's transformation through Flink's
    input conversion (``DataSteamToTable``): each record into a row of the physical columns,
    then the record's timestamp where a ``rowtime`` metadata column asks for it."""

    name: str
    #: Physical columns, then the rowtime metadata column (if declared), then computed ones.
    columns: list[Column]
    #: The stream's last transformation, which the scan reads.
    transformation: Any
    #: What a record is: ``atomic`` (one column ``f0``), ``tuple`` or ``row`` (one column a field).
    record: str
    #: The table's identifier as Flink prints it (``default_catalog.default_database.v``).
    identifier: str
    watermark: tuple[str, exp.Expr] | None = None
    #: The metadata column holding each record's timestamp (Flink's ``rowtime`` metadata key).
    rowtime: str | None = None
    #: Physical fields read from a record (by position) for each physical column.
    positions: tuple[int, ...] = ()
    #: A DataStream's table has no primary key (DESCRIBE reads it as of any table).
    primary_key: tuple[str, ...] = ()
    #: Whether the stream is a changelog (``from_changelog_stream``: Rows of every kind).
    changelog: bool = False

    @property
    def physical(self) -> list[Column]:
        return [c for c in self.columns if c.expression is None and c.name != self.rowtime]

    def data_type(self) -> str:
        """The stream's physical data type as Flink prints it (a tuple is a structured type of
        its Java class, a row a ROW, any other type its own)."""
        columns = self.physical
        fields = ", ".join(f"`{c.name}` {c.type.flink()}" for c in columns if c.type is not None)
        if self.record == "tuple":
            return f"STRUCTURED<'org.apache.flink.api.java.tuple.Tuple{len(columns)}', {fields}> NOT NULL"
        if self.record == "row":
            return f"ROW<{fields}> NOT NULL"
        assert columns[0].type is not None
        return columns[0].type.flink()

    @property
    def bounded(self) -> bool:
        """Whether the stream ends: no source upstream of it is unbounded (Flink's
        ExternalDynamicSource asks each transformation's boundedness)."""
        seen: set[int] = set()
        pending = [self.transformation]
        while pending:
            transformation = pending.pop()
            if id(transformation) in seen:
                continue
            seen.add(id(transformation))
            if getattr(transformation, "bounded", True) is False:
                return False
            pending.extend(transformation.inputs)
        return True

    @property
    def source_watermark(self) -> bool:
        """Whether the table takes the stream's watermarks (``SOURCE_WATERMARK()``)."""
        return self.watermark is not None and _is_source_watermark(self.watermark[1])


def _is_source_watermark(expression: exp.Expr) -> bool:
    return isinstance(expression, exp.Anonymous) and expression.name.upper() == "SOURCE_WATERMARK"


CatalogObject = CatalogTable | CatalogView | CatalogDataStream


def path(name: str) -> tuple[str, str, str]:
    return (CATALOG, DATABASE, name)


def qualified(name: str) -> str:
    return f"{CATALOG}.{DATABASE}.{name}"


class Catalog:
    """The session's tables and views by name."""

    def __init__(self) -> None:
        self._permanent: dict[str, CatalogObject] = {}
        self._temporary: dict[str, CatalogObject] = {}

    def _split(self, name: str) -> str:
        parts = name.split(".")
        if (len(parts) == 3 and parts[:2] == [CATALOG, DATABASE]) or (len(parts) == 2 and parts[0] == DATABASE):
            return parts[-1]
        if len(parts) > 1:
            raise ValidationException(f"Catalog {parts[0]} does not exist")
        return name

    def lookup(self, name: str) -> CatalogObject | None:
        short = self._split(name)
        return self._temporary.get(short) or self._permanent.get(short)

    def create(self, obj: CatalogObject, temporary: bool, if_not_exists: bool) -> None:
        store = self._temporary if temporary else self._permanent
        if obj.name in store:
            if if_not_exists:
                return
            what = "Temporary table" if temporary else "Table"
            if isinstance(obj, CatalogView):
                what = "Temporary view" if temporary else "Table or view"
            raise ValidationException(
                f"Could not execute CreateTable in path `{CATALOG}`.`{DATABASE}`.`{obj.name}`"
                if not temporary
                else f"{what} '`{CATALOG}`.`{DATABASE}`.`{obj.name}`' already exists"
            )
        store[obj.name] = obj

    def drop(self, name: str, view: bool, if_exists: bool, temporary: bool) -> None:
        short = self._split(name)
        for store in (self._temporary, self._permanent) if not temporary else (self._temporary,):
            obj = store.get(short)
            if obj is not None and isinstance(obj, CatalogView) == view:
                del store[short]
                return
        if not if_exists:
            kind = "View" if view else "Table"
            prefix = "Temporary " + kind.lower() if temporary else kind
            raise ValidationException(f"{prefix} with identifier '{CATALOG}.{DATABASE}.{short}' does not exist.")

    def create_temporary_alias(self, name: str, obj: CatalogDataStream) -> None:
        """Register ``obj`` (a DataStream's table) also as the temporary view ``name``: a view
        of the Table API's table itself reads its scan, as Flink's view of a QueryOperation."""
        if name in self._temporary:
            raise ValidationException(f"Temporary table '`{CATALOG}`.`{DATABASE}`.`{name}`' already exists")
        self._temporary[name] = obj

    def short_name(self, name: str) -> str:
        """``name`` without the default catalog and database it may be qualified with."""
        return self._split(name)

    def names(self) -> list[str]:
        """The names of the tables and views, anonymous ones (a DataStream's) left out."""
        return sorted(n for n in set(self._permanent) | set(self._temporary) if not n.startswith("*anonymous_"))
