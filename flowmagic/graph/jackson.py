"""JSON text laid out exactly like Jackson's default pretty printer, as Flink prints plans."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["pretty_json"]


def pretty_json(value: Any) -> str:
    """Serialize ``value`` the way ``ObjectMapper.writerWithDefaultPrettyPrinter()`` does.

    Objects break lines and indent two spaces per object level; arrays stay on one line
    (``[ a, b ]``, ``[ ]``) and do not add a level; keys are written as ``"key" : value``.
    """
    parts: list[str] = []
    _write(value, 0, parts)
    return "".join(parts)


def _write(value: Any, depth: int, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{ }")
            return
        inner = "\n" + "  " * (depth + 1)
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            out.append(("," if index else "") + inner + json.dumps(str(key), ensure_ascii=False) + " : ")
            _write(item, depth + 1, out)
        out.append("\n" + "  " * depth + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[ ]")
            return
        out.append("[ ")
        for index, item in enumerate(value):
            if index:
                out.append(", ")
            _write(item, depth, out)
        out.append(" ]")
    else:
        out.append(json.dumps(value, ensure_ascii=False))
