"""PyFlink's ``TableResult`` of a statement that does not run a job (DDL, SET, SHOW, EXPLAIN)."""

from __future__ import annotations

from enum import Enum


class ResultKind(Enum):
    SUCCESS = 0
    SUCCESS_WITH_CONTENT = 1


class TableResult:
    """The rows a statement returned, printed as Flink's tableau."""

    def __init__(self, kind: str, columns: list[str], rows: list[tuple[object, ...]]) -> None:
        self._kind = ResultKind[kind]
        self._columns = columns or ["result"]
        self._rows = rows if kind == "SUCCESS_WITH_CONTENT" else [("OK",)]

    def get_result_kind(self) -> ResultKind:
        return self._kind

    def collect(self) -> list[tuple[object, ...]]:
        return list(self._rows)

    def wait(self, timeout_ms: int | None = None) -> None:
        """Nothing to wait for: the statement ran no job."""

    def print(self) -> None:
        cells = [[_text(v) for v in row] for row in self._rows]
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(self._columns)]
        border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        lines = [
            border,
            "|" + "|".join(f" {c:>{w}} " for c, w in zip(self._columns, widths, strict=True)) + "|",
            border,
        ]
        lines += ["|" + "|".join(f" {v:>{w}} " for v, w in zip(r, widths, strict=True)) + "|" for r in cells]
        lines.append(border)
        lines.append(f"{len(cells)} row{'s' if len(cells) != 1 else ''} in set")
        print("\n".join(lines))


def _text(value: object) -> str:
    if value is None:
        return "<NULL>"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value)
