"""Row expressions as Flink's Optimized Execution Plan prints them: infix operators between
parentheses, field names, literals without character set, casts without ``NOT NULL``."""

from __future__ import annotations

from collections.abc import Sequence

from flowmagic.sql import digest
from flowmagic.sql.rex import BINARY, Call, InputRef, Literal, Over, Rex


def rex(node: Rex, names: Sequence[str]) -> str:
    if isinstance(node, InputRef):
        return names[node.index]
    if isinstance(node, Literal):
        # Execution plans name a literal's type only for intervals and nulls.
        typed = node.type.is_interval or node.value is None
        return digest.literal(node.value, node.type, charset=False, suffix=typed)
    if isinstance(node, Call):
        args = [rex(o, names) for o in node.operands]
        if node.operator in BINARY and len(args) >= 2:
            return "(" + f" {node.operator} ".join(args) + ")"
        if node.operator in ("IS NULL", "IS NOT NULL", "IS TRUE", "IS FALSE", "IS NOT TRUE", "IS NOT FALSE"):
            return f"{args[0]} {node.operator}"
        if node.operator == "CAST":
            return f"CAST({args[0]} AS {node.type.full(charset=False, not_null=False)})"
        return f"{node.operator}({', '.join(args)})"
    if isinstance(node, Over):
        return digest.over(node, names, charset=False)
    raise TypeError(node)
