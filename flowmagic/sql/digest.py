"""Calcite's digests of row expressions, as the Abstract Syntax Tree and the Optimized Physical
Plan print them: prefix calls, ``$i`` or field names, ``_UTF-16LE'x'`` literals."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from flowmagic.sql.rex import Call, InputRef, Literal, Over, Rex
from flowmagic.sql.types import SqlType


def literal(value: object, type_: SqlType, charset: bool = True, suffix: bool = True) -> str:
    """A literal as ``RexLiteral`` prints it (a type suffix unless the type is the literal's own)."""
    if type_.name == "SARG":
        assert isinstance(value, tuple)
        text, typed = value
        return str(text) + (str(typed) if charset and suffix else "")
    if type_.name == "SYMBOL":
        return f"FLAG({value})" if charset else str(value)
    if value is None:
        return f"null:{type_.full(charset)}"
    if type_.is_character:
        text = "'" + str(value).replace("'", "''") + "'"
        text = f"_UTF-16LE{text}" if charset else text
        if suffix and type_.name == "VARCHAR" and charset:
            return f"{text}:{type_.full(charset, not_null=False)}"
        return text
    if type_.name == "BOOLEAN":
        return "true" if value else "false"
    if type_.is_interval:
        return f"{value}:{type_.name}"
    # Without character sets (the batch physical plan), literals carry no type either.
    if type_.name == "INTEGER" or not suffix or not charset:
        return str(value)
    if type_.name == "DECIMAL":
        return f"{Decimal(str(value))}:{type_.short()}"
    return f"{value}:{type_.short()}"


def rex(node: Rex, names: Sequence[str] | None = None, charset: bool = True) -> str:
    """``node``'s digest: ``$i`` references (the logical plan) or ``names`` (physical nodes), whose
    casts print ``CAST(x AS T)`` where the logical digest prints ``CAST(x):T``."""
    if isinstance(node, InputRef):
        return f"${node.index}" if names is None else names[node.index]
    if isinstance(node, Literal):
        return literal(node.value, node.type, charset)
    if isinstance(node, Call):
        args = [rex(o, names, charset) for o in node.operands]
        if node.operator == "CAST":
            if names is None:
                return f"CAST({args[0]}):{node.type.full(charset)}"
            return f"CAST({args[0]} AS {node.type.full(charset)})"
        return f"{node.operator}({', '.join(args)})"
    if isinstance(node, Over):
        return over(node, names, charset)
    raise TypeError(node)


def over(node: Over, names: Sequence[str] | None, charset: bool = True) -> str:
    args = ", ".join(rex(o, names, charset) for o in node.operands)
    window = []
    if node.partition:
        window.append("PARTITION BY " + ", ".join(rex(p, names, charset) for p in node.partition))
    if node.order:
        keys = []
        for key in node.order:
            text = rex(key.expression, names, charset)
            # Calcite's collation digest always names where nulls go.
            text += (" DESC" if key.descending else "") + (" NULLS LAST" if key.nulls_last else " NULLS FIRST")
            keys.append(text)
        window.append("ORDER BY " + ", ".join(keys))
    return f"{node.operator}({args}) OVER ({' '.join(window)})"
