"""A SQL row as PyFlink hands it to Python: a ``Row`` with its kind (and, out of
``to_data_stream``, its field names), its values converted from the runtime's forms (a
TIMESTAMP in epoch milliseconds, a DATE in days) to the Python types PyFlink's
``TableResult.collect()`` and ``to_data_stream`` give."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flowmagic.runtime.sql.values import external_value, parse_type
from flowmagic.vocabulary.types import Row, RowKind

__all__ = ["RowsOfTable"]

_KINDS = (RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE)
#: The column types whose values PyFlink hands out in another form than the runtime's.
_CONVERTED = ("TIMESTAMP", "TIMESTAMP_LTZ", "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "DATE")


@dataclass(frozen=True)
class RowsOfTable:
    """A SQL row (values, then its kind) into a ``Row`` of the table's ``types``: named by
    ``names``, or positional (``None``) as ``TableResult.collect()``'s rows are in PyFlink."""

    names: tuple[str, ...] | None
    types: tuple[str, ...]
    #: The columns whose values PyFlink hands out in another form (derived from ``types``).
    converted: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        converted = tuple(i for i, t in enumerate(self.types) if parse_type(t).name in _CONVERTED)
        object.__setattr__(self, "converted", converted)

    def __call__(self, record: tuple[Any, ...]) -> Row:
        values = list(record[:-1])
        for index in self.converted:
            values[index] = external_value(values[index], self.types[index])
        row = Row(*values)
        if self.names is not None:
            row.set_field_names(list(self.names))
        row.set_row_kind(_KINDS[record[-1]])
        return row
