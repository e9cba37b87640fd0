"""The indented trees Flink's EXPLAIN prints (``+-`` last child, ``:-`` the others)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

N = TypeVar("N")


def render(root: N, line: Callable[[N], str], children: Callable[[N], Sequence[N]]) -> str:
    """Every node on its line under ``root``, indented as Flink's RelTreeWriter does."""
    lines: list[str] = []

    def visit(node: N, lasts: list[bool]) -> None:
        prefix = ""
        if lasts:
            prefix = "".join("   " if last else ":  " for last in lasts[:-1])
            prefix += "+- " if lasts[-1] else ":- "
        lines.append(prefix + line(node))
        kids = list(children(node))
        for i, kid in enumerate(kids):
            visit(kid, [*lasts, i == len(kids) - 1])

    visit(root, [])
    return "\n".join(lines)


def call(name: str, terms: Sequence[tuple[str, str]]) -> str:
    """``Name(key=[value], ...)``; a node without terms is its name alone, as Calcite writes it."""
    if not terms:
        return name
    return name + "(" + ", ".join(f"{k}=[{v}]" for k, v in terms) + ")"
