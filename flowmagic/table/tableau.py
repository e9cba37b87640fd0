"""Flink's tableau text of a result (``TableResult.print()``, the SQL client's result view).

Streaming: an ``op`` column with each row's kind, column widths from the columns' types
(Flink's ``PrintUtils.columnWidthsByType``: an INT 11 wide, a BIGINT 20, a DECIMAL its
precision plus 2, other types the maximum of 30; at least ``<NULL>``'s 6 when nullable),
then ``Received a total of N rows``.
Batch: widths from the data (at most 30), then ``N rows in set`` or ``Empty set``. Cells are
right-aligned; longer ones are cut with ``...``; NULL is ``<NULL>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from flowmagic.runtime.sql.values import SqlTypeInfo, parse_type, value_string

__all__ = ["MAX_COLUMN_WIDTH", "batch_tableau", "cell_text", "streaming_tableau", "streaming_tableau_lines"]

MAX_COLUMN_WIDTH = 30
NULL = "<NULL>"

_TYPE_WIDTHS = {"TINYINT": 4, "SMALLINT": 6, "INT": 11, "BIGINT": 20, "BOOLEAN": 5, "DATE": 10}


def cell_text(value: Any, type_text: str, zone: str = "UTC") -> str:
    """A value as the tableau writes it (a TIMESTAMP_LTZ in the session's time ``zone``)."""
    return NULL if value is None else value_string(value, type_text, zone)


def _type_width(type_text: str) -> int:
    info = parse_type(type_text)
    width = _root_width(info)
    # A nullable column may show <NULL>.
    return max(width, len(NULL)) if info.nullable else width


def _root_width(info: SqlTypeInfo) -> int:
    if info.name in _TYPE_WIDTHS:
        return _TYPE_WIDTHS[info.name]
    if info.name == "DECIMAL":
        return (info.precision or 10) + 2
    if info.is_timestamp:
        precision = 6 if info.precision is None else info.precision
        return 19 if precision == 0 else 20 + precision
    if info.name == "TIME":
        precision = info.precision or 0
        return 8 if precision == 0 else precision + 9
    return MAX_COLUMN_WIDTH


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "|" + "|".join(f" {_fit(c, w):>{w}} " for c, w in zip(cells, widths, strict=True)) + "|"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[int]) -> list[str]:
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [border, _line(header, widths), border]
    lines += [_line(r, widths) for r in rows]
    return lines


def streaming_tableau(
    names: Sequence[str], types: Sequence[str], rows: Sequence[tuple[str, Sequence[Any]]], zone: str = "UTC"
) -> str:
    """The streaming tableau of ``rows``, each ``(kind, values)`` (kind ``+I``, ``-U``...)."""
    return "\n".join(streaming_tableau_lines(names, types, rows, zone))


def streaming_tableau_lines(
    names: Sequence[str], types: Sequence[str], rows: Iterable[tuple[str, Sequence[Any]]], zone: str = "UTC"
) -> Iterator[str]:
    """The streaming tableau's lines, each row's as soon as ``rows`` gives it (an unbounded
    query's print() shows its rows as they come, as Flink's does)."""
    widths = [2] + [max(len(n), _type_width(t)) for n, t in zip(names, types, strict=True)]
    header = _table(["op", *names], [], widths)
    yield from header
    count = 0
    for kind, values in rows:
        count += 1
        yield _line([kind, *(cell_text(v, t, zone) for v, t in zip(values, types, strict=True))], widths)
    if count:
        yield header[0]
    yield f"Received a total of {count} row{'s' if count > 1 else ''}"


def batch_tableau(names: Sequence[str], types: Sequence[str], rows: Sequence[Sequence[Any]], zone: str = "UTC") -> str:
    """The batch tableau of ``rows`` (their values)."""
    if not rows:
        return "Empty set"
    cells = [[cell_text(v, t, zone) for v, t in zip(values, types, strict=True)] for values in rows]
    widths = [min(MAX_COLUMN_WIDTH, max([len(n)] + [len(r[i]) for r in cells])) for i, n in enumerate(names)]
    lines = _table(list(names), cells, widths)
    lines.append(lines[0])
    count = len(cells)
    lines.append(f"{count} row{'s' if count > 1 else ''} in set")
    return "\n".join(lines)
