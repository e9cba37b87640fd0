"""The connectors a table may name, and their WITH options checked as Flink's factories check
them when a query reads or writes the table (CREATE TABLE stores options unchecked, as Flink does).
One module, so that it can later ask flowmagic's runtime connector registry instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flowmagic.sql.errors import ValidationException

OFFERED = ("blackhole", "datagen", "filesystem", "print")
#: The table factories Flink 2.3's distribution has on its classpath, as its message lists them
#: (flowmagic's own offer goes to a note of the error, out of Flink's text).
_FLINK_FACTORIES = ("blackhole", "datagen", "filesystem", "legacy-csv", "print")
_FORMATS = ("csv", "json")


@dataclass(frozen=True)
class ConnectorTraits:
    """What the planner needs to know of a table's connector."""

    identifier: str
    bounded: bool
    projection_push_down: bool
    filter_push_down: bool
    source: bool
    sink: bool


def _table(path: str) -> str:
    return f"'{path}'"


def _check_keys(
    table: str, identifier: str, options: Mapping[str, str], allowed: set[str], prefixes: Sequence[str]
) -> None:
    unknown = sorted(
        k for k in options if k != "connector" and k not in allowed and not any(k.startswith(p) for p in prefixes)
    )
    if unknown:
        supported = "\n".join(sorted({"connector", *allowed}))
        raise ValidationException(
            f"Unsupported options found for '{identifier}'.\n\n"
            f"Unsupported options:\n\n" + "\n".join(unknown) + f"\n\nSupported options:\n\n{supported}"
        )


def _datagen(table: str, options: Mapping[str, str], columns: Sequence[str]) -> ConnectorTraits:
    allowed = {"rows-per-second", "number-of-rows", "scan.parallelism"}
    field_options = {"kind", "min", "max", "max-past", "length", "start", "end", "null-rate", "var-len"}
    for key in options:
        if key.startswith("fields."):
            parts = key.split(".")
            if len(parts) != 3 or parts[1] not in columns or parts[2] not in field_options:
                raise ValidationException(f"Unsupported options found for 'datagen'.\n\nUnsupported options:\n\n{key}")
            if parts[2] == "kind" and options[key] not in ("random", "sequence"):
                raise ValidationException(
                    f"Could not parse value '{options[key]}' for key '{key}'. Expected one of: [random, sequence]"
                )
    _check_keys(table, "datagen", options, allowed, ("fields.",))
    for key in ("rows-per-second", "number-of-rows"):
        if key in options and not options[key].strip().lstrip("-").isdigit():
            raise ValidationException(f"Could not parse value '{options[key]}' for key '{key}'.")
    sequences = [c for c in columns if options.get(f"fields.{c}.kind") == "sequence"]
    for column in sequences:
        for bound in ("start", "end"):
            if f"fields.{column}.{bound}" not in options:
                raise ValidationException(f"fields.{column}.{bound} can not be null.")
    bounded = "number-of-rows" in options or bool(sequences)
    # Flink's datagen source reads every column: it takes no projection (checked on Flink 2.3).
    return ConnectorTraits("datagen", bounded, False, False, True, False)


def _filesystem(table: str, options: Mapping[str, str]) -> ConnectorTraits:
    if "path" not in options:
        raise ValidationException("One or more required options are missing.\n\nMissing required options are:\n\npath")
    fmt = options.get("format")
    if fmt is None:
        raise ValidationException(
            "One or more required options are missing.\n\nMissing required options are:\n\nformat"
        )
    if fmt not in _FORMATS:
        raise ValidationException(
            f"Could not find any format factory for identifier '{fmt}' in the classpath. "
            f"flowmagic reads and writes the formats: {', '.join(_FORMATS)}."
        )
    allowed = {"path", "format", "source.monitor-interval", "sink.rolling-policy.file-size"}
    _check_keys(table, "filesystem", options, allowed, (f"{fmt}.", "sink.", "partition."))
    return ConnectorTraits("filesystem", "source.monitor-interval" not in options, True, True, True, True)


def validate(table: str, options: Mapping[str, str], columns: Sequence[str], source: bool) -> ConnectorTraits:
    """The traits of the table's connector, its options checked; Flink's error otherwise: which
    table could not be read (``source``) or written, its options, and the cause."""
    try:
        traits = _traits(table, options, columns)
    except ValidationException as cause:
        # Flink's message names the table and its options (sorted by key); the reason is its
        # cause, and what flowmagic offers instead a note of the cause, out of Flink's text.
        what = "a source for reading" if source else "a sink for writing"
        listed = "\n".join(f"'{k}'='{options[k]}'" for k in sorted(options))
        error = ValidationException(f"Unable to create {what} table {_table(table)}.\n\nTable options are:\n\n{listed}")
        for note in getattr(cause, "__notes__", ()):
            error.add_note(note)
        raise error from cause
    if not (traits.source if source else traits.sink):
        role, other = ("source", "sink") if traits.source else ("sink", "source")
        raise ValidationException(
            f"Connector '{traits.identifier}' can only be used as a {role}. It cannot be used as a {other}."
        )
    return traits


def _traits(table: str, options: Mapping[str, str], columns: Sequence[str]) -> ConnectorTraits:
    identifier = options.get("connector")
    if identifier is None:
        raise ValidationException(
            f"Table options do not contain an option key 'connector' for discovering a connector. "
            f"Therefore, Flink assumes a managed table. However, a managed table factory that "
            f"implements org.apache.flink.table.factories.ManagedTableFactory is not in the classpath. "
            f"(table {_table(table)}; flowmagic offers the connectors: {', '.join(OFFERED)})"
        )
    if identifier == "datagen":
        return _datagen(table, options, columns)
    if identifier == "filesystem":
        return _filesystem(table, options)
    if identifier == "print":
        _check_keys(table, "print", options, {"print-identifier", "standard-error", "sink.parallelism"}, ())
        return ConnectorTraits("print", True, False, False, False, True)
    if identifier == "blackhole":
        _check_keys(table, "blackhole", options, set(), ())
        return ConnectorTraits("blackhole", True, False, False, False, True)
    missing = ValidationException(
        f"Could not find any factory for identifier '{identifier}' that implements "
        f"'org.apache.flink.table.factories.DynamicTableFactory' in the classpath.\n\n"
        f"Available factory identifiers are:\n\n" + "\n".join(_FLINK_FACTORIES)
    )
    missing.add_note(f"flowmagic has no '{identifier}' connector; it offers {', '.join(OFFERED)}.")
    raise missing
