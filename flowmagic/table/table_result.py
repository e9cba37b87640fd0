"""PyFlink's ``TableResult``: of a statement that ran no job (DDL, SET, SHOW, EXPLAIN), its rows;
of a query or an INSERT, the job it submitted: ``wait()``, ``collect()``, ``print()``,
``get_job_client()``, ``get_table_schema()``, ``get_result_kind()``."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from enum import Enum
from typing import Any

from flowmagic.table.rows import RowsOfTable
from flowmagic.table.tableau import batch_tableau, streaming_tableau_lines
from flowmagic.vocabulary.types import Row

__all__ = ["ResultKind", "TableResult", "TableSchema"]


class ResultKind(Enum):
    SUCCESS = 0
    SUCCESS_WITH_CONTENT = 1


class TableSchema:
    """The result's columns: names and Flink types (``INT NOT NULL``)."""

    def __init__(self, names: Sequence[str], types: Sequence[str]) -> None:
        self._names = list(names)
        self._types = list(types)

    def get_field_names(self) -> list[str]:
        return list(self._names)

    def get_field_data_types(self) -> list[str]:
        return list(self._types)

    def get_field_count(self) -> int:
        return len(self._names)

    def __str__(self) -> str:
        return "(\n" + ",\n".join(f"  `{n}` {t}" for n, t in zip(self._names, self._types, strict=True)) + "\n)"


class CloseableIterator(Iterator[Row]):
    """PyFlink's ``CloseableIterator`` of a result's rows (``with result.collect() as rows:``)."""

    def __init__(self, rows: Iterator[Row], job_rows: Any = None) -> None:
        self._rows = rows
        #: An unbounded query's rows as they come: closing them cancels its job.
        self._job_rows = job_rows

    def __next__(self) -> Row:
        return next(self._rows)

    def close(self) -> None:
        self._rows = iter(())
        if self._job_rows is not None:
            self._job_rows.close()

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class TableResult:
    """The result of ``execute_sql``/``execute``: rows a statement returned, or a job's."""

    def __init__(
        self,
        kind: str,
        columns: list[str],
        rows: list[tuple[object, ...]],
        *,
        types: Sequence[str] | None = None,
        job: Any = None,
        sink_id: int | None = None,
        streaming: bool = False,
        rows_as_they_come: Any = None,
        time_zone: str = "UTC",
    ) -> None:
        self._kind = ResultKind[kind]
        self._columns = columns or ["result"]
        self._types = list(types) if types is not None else ["STRING"] * len(self._columns)
        self._rows: list[tuple[object, ...]] = rows if kind == "SUCCESS_WITH_CONTENT" or job is not None else [("OK",)]
        self._job = job
        self._sink_id = sink_id
        self._streaming = streaming
        self._echoed = False
        #: An unbounded query's rows, epoch by epoch (a ``CollectedRecords``; None: bounded).
        self._rows_as_they_come = rows_as_they_come
        self._zone = time_zone

    def get_result_kind(self) -> ResultKind:
        return self._kind

    def get_job_client(self) -> Any:
        """The client of the job the statement submitted (None: it ran none)."""
        return self._job

    def get_table_schema(self) -> TableSchema:
        return TableSchema(self._columns, self._types)

    def wait(self, timeout_ms: int | None = None) -> None:
        """Wait for the statement's job to end (at most ``timeout_ms``); raise its failure.
        An INSERT into a ``print`` table shows its lines then, as its sink printed them."""
        if self._job is None:
            return
        self._job.wait(None if timeout_ms is None else timeout_ms / 1000)
        if self._job.get_job_status().is_globally_terminal:
            self._echo()

    def _echo(self) -> None:
        if self._echoed:
            return
        self._echoed = True
        for to_stderr, line in self._job.result().printed:
            print(line, file=sys.stderr if to_stderr else sys.stdout)

    def _changelog(self) -> Iterator[tuple[Any, ...]]:
        """The query's rows as the collect sink received them (values, then the kind): of an
        unbounded query as its epochs complete, until its job ends."""
        if self._sink_id is None:
            return iter([(*row, 0) for row in self._rows])
        if self._rows_as_they_come is not None:
            return iter(self._rows_as_they_come)
        self.wait()
        return iter(self._job.result().collected(self._sink_id))

    def collect(self) -> CloseableIterator:
        """The result's rows as positional ``Row`` objects of PyFlink's Python values (a TIMESTAMP
        a ``datetime``, a DATE a ``date``), each with its kind (``get_row_kind()``); of an
        unbounded query as they come, its job cancelled when the iterator is closed."""
        to_row = RowsOfTable(None, tuple(self._types))
        return CloseableIterator(map(to_row, self._changelog()), self._rows_as_they_come)

    def print(self) -> None:
        """Print the result as Flink's tableau (streaming: with each row's kind)."""
        if self._job is None or self._sink_id is None:
            print(_statement_tableau(self._columns, self._rows))
            if self._job is not None:
                self._echo()
            return
        changelog = self._changelog()
        if self._streaming:
            kinds = ("+I", "-U", "+U", "-D")
            rows = ((kinds[r[-1]], r[:-1]) for r in changelog)
            try:
                for line in streaming_tableau_lines(self._columns, self._types, rows, self._zone):
                    print(line, flush=True)
            finally:
                if self._rows_as_they_come is not None:
                    self._rows_as_they_come.close()
        else:
            print(batch_tableau(self._columns, self._types, [r[:-1] for r in changelog], self._zone))


def _statement_tableau(columns: list[str], rows: list[tuple[object, ...]]) -> str:
    """The rows of a statement that ran no query (every width from the data, uncut)."""
    cells = [[_text(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [border, "|" + "|".join(f" {c:>{w}} " for c, w in zip(columns, widths, strict=True)) + "|", border]
    lines += ["|" + "|".join(f" {v:>{w}} " for v, w in zip(r, widths, strict=True)) + "|" for r in cells]
    lines.append(border)
    lines.append(f"{len(cells)} row{'s' if len(cells) != 1 else ''} in set")
    return "\n".join(lines)


def _text(value: object) -> str:
    if value is None:
        return "<NULL>"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value)
