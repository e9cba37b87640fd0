"""Connectors: sources and sinks found by identifier, as Flink's table factories.

A registered source or sink class (see :mod:`flowmagic.runtime.registry`) is a connector when
it names an ``identifier`` (Flink's ``factoryIdentifier()``: ``datagen``, ``filesystem``,
``socket``, ``print``, ``blackhole``) and makes its operator from a table's string options:
``create_source`` / ``create_sink``, as Flink's ``DynamicTableSourceFactory`` and
``DynamicTableSinkFactory``. SQL's ``WITH ('connector' = '...')`` finds them here with
:func:`create_table_source` and :func:`create_table_sink`, which fail in Flink's words.

A connector's records are what its operator makes: a datagen table's rows are
:class:`~flowmagic.vocabulary.types.Row` objects of its columns, a file's or a socket's records
its lines. A table's ``format`` (``raw``, ``csv``, ``json``: :class:`TableFormat`) says how
those lines are a row's columns: a ``raw`` line is the record; a ``csv`` or ``json`` line is
decoded by the SQL table scan, which reads the format's options from :class:`ConnectorSource`.
What a source lets the planner push into it (Flink's ``SupportsProjectionPushDown`` and
``SupportsFilterPushDown`` abilities) it says there too.
Adding a connector is one module: its source (or sink) class, registered for its operator
kind with its identifier and factory (and, for an unbounded source, its feed in the
continuous mode, see :meth:`flowmagic.runtime.connectors.sources.Source.open_feed`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from flowmagic.errors import InvalidArgumentError, ValidationException
from flowmagic.graph.operators import OperatorSpec
from flowmagic.runtime.registry import connector_identifiers, connectors
from flowmagic.vocabulary.option_values import option_bool, option_int
from flowmagic.vocabulary.time import to_millis_text

__all__ = [
    "FLINK_TABLE_FACTORIES",
    "Column",
    "ConnectorSink",
    "ConnectorSource",
    "TableContext",
    "TableFormat",
    "TableOptions",
    "create_table_sink",
    "create_table_source",
    "find_connector",
]

_DYNAMIC_TABLE_FACTORY = "org.apache.flink.table.factories.DynamicTableFactory"
_SOURCE_FACTORY = "org.apache.flink.table.factories.DynamicTableSourceFactory"
_SINK_FACTORY = "org.apache.flink.table.factories.DynamicTableSinkFactory"
_DESERIALIZATION_FORMAT_FACTORY = "org.apache.flink.table.factories.DeserializationFormatFactory"

#: The table factories on the classpath of Flink 2.3's distribution, as Flink's error for an
#: unknown connector lists them (flowmagic's own connectors go to a note of that error).
FLINK_TABLE_FACTORIES = ("blackhole", "datagen", "filesystem", "legacy-csv", "print")

#: The options of each format flowmagic reads and writes (Flink's format factories' options,
#: without the format's prefix). A ``raw`` line is a record; the SQL table scan decodes the
#: others, by these options.
_FORMAT_OPTIONS: dict[str, tuple[str, ...]] = {
    "raw": ("charset",),
    "csv": (
        "allow-comments",
        "allow-trailing-comma",
        "array-element-delimiter",
        "disable-quote-character",
        "empty-string-as-null",
        "escape-character",
        "fail-on-missing-columns",
        "field-delimiter",
        "ignore-parse-errors",
        "ignore-trailing-unmappable",
        "null-literal",
        "quote-character",
        "trim-spaces",
    ),
    "json": (
        "decode.json-parser.enabled",
        "encode.decimal-as-plain-number",
        "encode.ignore-null-fields",
        "fail-on-missing-field",
        "ignore-parse-errors",
        "map-null-key.literal",
        "map-null-key.mode",
        "timestamp-format.standard",
    ),
}

_T = TypeVar("_T")


@dataclass(frozen=True)
class Column:
    """A column of a table: its name and its Flink SQL type as written (``INT``, ``STRING``)."""

    name: str
    type: str


@dataclass(frozen=True)
class TableContext:
    """What a factory reads (Flink's ``DynamicTableFactory.Context``): the table's name, its
    physical columns, and its ``WITH`` options."""

    name: str
    columns: tuple[Column, ...]
    options: Mapping[str, str]


@dataclass(frozen=True)
class TableFormat:
    """A table's ``format`` option and that format's options (their keys without the
    ``<format>.`` prefix, as Flink hands them to its format factory)."""

    identifier: str
    options: Mapping[str, str]


@dataclass(frozen=True)
class ConnectorSource:
    """What a source factory makes: the source operator, whether it ends by itself, the
    parallelism it must run at (None: the job's), the format of its lines (None: its records
    are not lines), whether the planner may push a projection or a filter into it, and the
    rows it reports to the batch planner's cost model (Flink's ``SupportsStatisticReport``;
    None: unknown)."""

    operator: OperatorSpec
    bounded: bool
    parallelism: int | None = None
    format: TableFormat | None = None
    projection_push_down: bool = False
    filter_push_down: bool = False
    row_count: int | None = None


@dataclass(frozen=True)
class ConnectorSink:
    """What a sink factory makes: a sink operator (``print``, ``blackhole``), or the base
    path and charset of a FileSink that writes each record's text as a line (the program
    builder adds it as ``sink_to(FileSink.for_row_format(...))`` does: the runtime does not
    import the builder); and the kinds of rows it consumes of a query that makes every kind
    (Flink's ``DynamicTableSink.getChangelogMode``: ``I``, ``UB``, ``UA``, ``D``)."""

    operator: OperatorSpec | None = None
    file_base_path: str | None = None
    charset: str = "UTF-8"
    parallelism: int | None = None
    format: TableFormat | None = None
    changelog_mode: tuple[str, ...] = ("I", "UB", "UA", "D")


Role = Literal["source", "sink"]


def find_connector(identifier: str, role: Role | None = None) -> type[Any]:
    """The class of connector ``identifier`` (as a ``role``, when given): Flink's
    ``FactoryUtil.discoverFactory``, and its words when there is none."""
    found = connectors(identifier)
    if not found:
        available = "\n".join(FLINK_TABLE_FACTORIES)
        missing = ValidationException(
            f"Could not find any factory for identifier '{identifier}' that implements '{_DYNAMIC_TABLE_FACTORY}' "
            f"in the classpath.\n\nAvailable factory identifiers are:\n\n{available}"
        )
        missing.add_note(f"flowmagic has no '{identifier}' connector; it offers {', '.join(connector_identifiers())}.")
        raise missing
    if role is None:
        return found[0]
    for cls in found:
        if _role_of(cls) == role:
            return cls
    other = "sink" if role == "source" else "source"
    raise ValidationException(f"Connector '{identifier}' can only be used as a {other}. It cannot be used as a {role}.")


def _role_of(cls: type[Any]) -> Role:
    return "source" if hasattr(cls, "create_source") else "sink"


def _options_text(options: Mapping[str, str]) -> str:
    def quoted(text: str) -> str:
        return text.replace("'", "''")

    return "\n".join(sorted(f"'{quoted(key)}'='{quoted(value)}'" for key, value in options.items()))


def _discover(table: TableContext, role: Role) -> type[Any]:
    identifier = table.options.get("connector")
    if identifier is None:
        missing = ValidationException(
            "Table options do not contain an option key 'connector' for discovering a connector."
        )
        missing.add_note(f"flowmagic offers the connectors: {', '.join(connector_identifiers())}.")
        raise missing
    try:
        return find_connector(identifier, role)
    except ValidationException as error:
        if connectors(identifier):
            raise
        raise ValidationException(
            f"Cannot discover a connector using option: 'connector'='{identifier.replace(chr(39), chr(39) * 2)}'"
        ) from error


def _unable(what: str, table: TableContext, cause: ValidationException) -> ValidationException:
    error = ValidationException(
        f"Unable to create {what} table '{table.name}'.\n\nTable options are:\n\n{_options_text(table.options)}"
    )
    # What flowmagic offers instead rides on the error the user sees first, out of Flink's text.
    link: BaseException | None = cause
    while link is not None:
        for note in getattr(link, "__notes__", ()):
            error.add_note(note)
        link = link.__cause__
    return error


def create_table_source(table: TableContext) -> ConnectorSource:
    """The source of ``table`` by its ``connector`` option (Flink's ``FactoryUtil.createTableSource``)."""
    try:
        return _discover(table, "source").create_source(table)
    except ValidationException as error:
        raise _unable("a source for reading", table, error) from error


def create_table_sink(table: TableContext) -> ConnectorSink:
    """The sink of ``table`` by its ``connector`` option (Flink's ``FactoryUtil.createTableSink``)."""
    try:
        return _discover(table, "sink").create_sink(table)
    except ValidationException as error:
        raise _unable("a sink for writing", table, error) from error


class TableOptions:
    """A factory's reading of a table's options, checked as Flink's ``TableFactoryHelper``
    checks them: required options missing, then values that do not parse, then options no
    one consumed, each in Flink's words."""

    def __init__(
        self,
        identifier: str,
        table: TableContext,
        required: Iterable[str] = (),
        optional: Iterable[str] = (),
    ):
        self.identifier = identifier
        self.options = dict(table.options)
        self.required = sorted(required)
        self.consumed = {"connector", "property-version", *self.required, *optional}
        missing = [key for key in self.required if key not in self.options]
        if missing:
            raise ValidationException(
                "One or more required options are missing.\n\nMissing required options are:\n\n" + "\n".join(missing)
            )

    def consume(self, *keys: str) -> None:
        """Mark ``keys`` supported (the options a factory derives, such as ``fields.<name>.kind``)."""
        self.consumed.update(keys)

    def validate(self) -> None:
        """Refuse the options no one consumed (Flink's ``validateUnconsumedKeys``)."""
        unsupported = sorted(set(self.options) - self.consumed)
        if unsupported:
            raise ValidationException(
                f"Unsupported options found for '{self.identifier}'.\n\n"
                "Unsupported options:\n\n" + "\n".join(unsupported) + "\n\n"
                "Supported options:\n\n" + "\n".join(sorted(self.consumed))
            )

    def _read(self, key: str, default: _T, parse: Callable[[str], _T]) -> _T:
        if key not in self.options:
            return default
        try:
            return parse(self.options[key])
        except (ValueError, InvalidArgumentError) as error:
            raise ValidationException(f"Invalid value for option '{key}'.") from error

    def string(self, key: str, default: str | None = None) -> str | None:
        """Option ``key`` as text."""
        return self._read(key, default, str)

    def integer(self, key: str, default: int | None = None) -> int | None:
        """Option ``key`` as an integer, or ``default``."""
        return self._read(key, default, lambda text: option_int({key: text}, key))

    def number(self, key: str, default: float | None = None) -> float | None:
        """Option ``key`` as a number (an integer or a decimal), or ``default``."""

        def parse(text: str) -> float:
            try:
                return float(text.strip())
            except ValueError:
                raise InvalidArgumentError(f"Could not parse value '{text}' for key '{key}'.") from None

        return self._read(key, default, parse)

    def boolean(self, key: str, default: bool) -> bool:
        """Option ``key`` as ``true`` or ``false``, or ``default``."""
        return self._read(key, default, lambda text: option_bool({key: text}, key))

    def millis(self, key: str, default: int | None = None) -> int | None:
        """Option ``key`` as a duration (``5 s``, ``100ms``, a number of ms), in ms, or ``default``."""
        return self._read(key, default, lambda text: to_millis_text(text, key))

    def format(self, key: str = "format", *, file_system: bool = False) -> TableFormat:
        """The table's format (option ``key``) and its options, in Flink's words when
        flowmagic has no such format. ``file_system``: the ``filesystem`` connector's reading,
        which, as Flink's, leaves the format's own options unchecked (some formats cannot list
        them) and names a missing format as it does."""
        identifier = self.options.get(key)
        assert identifier is not None, f"{key!r} is a required option"
        known = _FORMAT_OPTIONS.get(identifier)
        if known is None:
            if file_system:
                missing = ValidationException(
                    f"Could not find any format factory for identifier '{identifier}' in the classpath."
                )
            else:
                missing = ValidationException(
                    f"Could not find any factory for identifier '{identifier}' that implements "
                    f"'{_DESERIALIZATION_FORMAT_FACTORY}' in the classpath.\n\n"
                    "Available factory identifiers are:\n\n" + "\n".join(sorted(_FORMAT_OPTIONS))
                )
            missing.add_note(f"flowmagic reads and writes the formats: {', '.join(sorted(_FORMAT_OPTIONS))}.")
            raise missing
        prefix = f"{identifier}."
        if file_system:
            self.consume(*(option for option in self.options if option.startswith(prefix)))
        else:
            self.consume(*(prefix + option for option in known))
        options = {option[len(prefix) :]: value for option, value in self.options.items() if option.startswith(prefix)}
        return TableFormat(identifier, options)

    def raw_charset(self, table_format: TableFormat) -> str:
        """The charset of a ``raw`` format's lines (its option ``raw.charset``); the other
        formats' text is UTF-8, as Flink's."""
        if table_format.identifier != "raw":
            return "UTF-8"
        charset = self.string("raw.charset", "UTF-8") or "UTF-8"
        try:
            "".encode(charset)
        except LookupError as error:
            raise ValidationException("Invalid value for option 'raw.charset'.") from error
        return charset
