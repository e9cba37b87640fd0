"""Code generation: row expressions (Rex trees) into Python source with Flink's semantics.

As Flink's planner generates Java for flink-table-runtime, this turns a Calc's projections and
condition (and the other expressions operators evaluate) into the source of one Python
function over a batch of rows, compiled by the runtime (:mod:`flowmagic.runtime.sql`) with its
namespace of built-in functions. The rules are Flink's, by the result types Calcite and Flink
derived: three-valued logic and null propagation, integer arithmetic wrapping at its type's
width and dividing toward zero, DECIMAL arithmetic rounded half-up to the derived scale,
DOUBLE arithmetic as Java's, CAST as Flink casts (to STRING as Flink prints).

A row is a tuple of its fields with its row kind last (see :mod:`flowmagic.runtime.sql`); an
expression reads field ``i`` as ``r[i]``.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

from flowmagic.graph.sql_runtime import Code
from flowmagic.sql.errors import TableException
from flowmagic.sql.rex import Call, InputRef, Literal, Rex
from flowmagic.sql.types import SqlType

__all__ = ["ExpressionGenerator", "calc_code", "expand_code", "literal_value", "runtime_type", "scalar_code"]

_INTEGERS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}
_APPROX = ("FLOAT", "REAL", "DOUBLE")
_COMPARISONS = {"=": "==", "<>": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}
_TIMESTAMPS = ("TIMESTAMP", "TIMESTAMP_WITH_LOCAL_TIME_ZONE")


def runtime_type(type_: SqlType) -> str:
    """The Flink type string the runtime reads (``INT NOT NULL``, ``TIMESTAMP_LTZ(3)``)."""
    text = type_.flink()
    if type_.time_attribute:
        # A time attribute is a TIMESTAMP_LTZ (or TIMESTAMP) value at run time.
        text = text.split(" *", 1)[0] + ("" if type_.nullable else " NOT NULL")
    return text


def literal_value(literal: Literal) -> Any:
    """The run-time value of a literal of its type (a DECIMAL's at its scale)."""
    value, type_ = literal.value, literal.type
    if value is None:
        return None
    name = type_.name
    if name == "DECIMAL":
        return Decimal(str(value)).quantize(Decimal(1).scaleb(-(type_.scale or 0)))
    if name in _INTEGERS:
        return int(str(value))
    if name in _APPROX:
        return float(str(value))
    if name == "BOOLEAN":
        return bool(value)
    if type_.is_interval:
        return int(str(value))
    if name == "CHAR" and isinstance(value, str) and type_.precision is not None:
        return value.ljust(type_.precision)
    return value


class ExpressionGenerator:
    """Generates expressions over a row ``r``; constants it cannot write as literals are
    collected, read as ``_k<n>``."""

    def __init__(self, zone: str = "UTC") -> None:
        self.constants: list[Any] = []
        #: ``table.local-time-zone``: how a TIMESTAMP_LTZ reads as a string.
        self.zone = zone

    def constant(self, value: Any) -> str:
        if value is None or isinstance(value, bool | int | str) or (isinstance(value, float) and math.isfinite(value)):
            return repr(value)
        self.constants.append(value)
        return f"_k{len(self.constants) - 1}"

    def code(self, source: str) -> Code:
        return Code(source, tuple(self.constants))

    # --- expressions ---------------------------------------------------------------------

    def rex(self, rex: Rex) -> str:
        """Python source of ``rex``'s value."""
        if isinstance(rex, InputRef):
            return f"r[{rex.index}]"
        if isinstance(rex, Literal):
            return self.constant(literal_value(rex))
        if isinstance(rex, Call):
            return self.call(rex)
        raise TableException(f"flowmagic cannot run the expression {type(rex).__name__} in a Calc yet")

    def _nullable(self, *operands: Rex) -> bool:
        return any(o.type.nullable for o in operands)

    def _as(self, rex: Rex, target: SqlType) -> str:
        """``rex`` as an operand of arithmetic of result type ``target``."""
        text = self.rex(rex)
        if target.name in _APPROX and rex.type.name not in _APPROX:
            return f"_float({text})" if rex.type.nullable else f"float({text})"
        return text

    def call(self, call: Call) -> str:
        op, operands, type_ = call.operator, call.operands, call.type
        if op in ("+", "-", "*") and len(operands) == 2:
            return self._arithmetic(op, call)
        if op == "-" and len(operands) == 1:
            operand = self.rex(operands[0])
            if type_.name in _INTEGERS:
                return f"_neg{_INTEGERS[type_.name]}({operand})"
            return f"_negate({operand})" if operands[0].type.nullable else f"(-{operand})"
        if op == "/":
            return self._divide(call)
        if op in ("%", "MOD"):
            left, right = (self.rex(o) for o in operands)
            return f"_mod({left}, {right})"
        if op in _COMPARISONS:
            left, right = (self.rex(o) for o in operands)
            if self._nullable(*operands):
                return f"_cmp({left}, {right}, _{_COMPARE_NAMES[op]})"
            return f"({left} {_COMPARISONS[op]} {right})"
        if op in ("AND", "OR"):
            parts = [self.rex(o) for o in operands]
            if not self._nullable(*operands):
                return "(" + f" {op.lower()} ".join(parts) + ")"
            return f"_{op.lower()}({', '.join(parts)})"
        if op == "NOT":
            operand = self.rex(operands[0])
            return f"_not({operand})" if operands[0].type.nullable else f"(not {operand})"
        if op == "IS NULL":
            return f"({self.rex(operands[0])} is None)"
        if op == "IS NOT NULL":
            return f"({self.rex(operands[0])} is not None)"
        if op in ("IS TRUE", "IS FALSE", "IS NOT TRUE", "IS NOT FALSE"):
            operand = self.rex(operands[0])
            test = {"IS TRUE": "is True", "IS FALSE": "is False", "IS NOT TRUE": "is not True"}.get(op, "is not False")
            return f"(bool({operand}) {test})" if op.endswith("TRUE") else f"(({operand}) {test})"
        if op == "CASE":
            return self._case(call)
        if op == "COALESCE":
            return f"_coalesce({', '.join(self._cast_to(o, type_) for o in operands)})"
        if op == "IF":
            condition, then, otherwise = operands
            return f"({self._cast_to(then, type_)} if {self.rex(condition)} else {self._cast_to(otherwise, type_)})"
        if op == "CAST":
            return self.cast(operands[0], type_)
        if op == "Reinterpret":
            # The value as it is, now read as a time attribute.
            return self.rex(operands[0])
        if op in ("||", "CONCAT"):
            parts = [self._string(o) for o in operands]
            if not self._nullable(*operands):
                return "(" + " + ".join(parts) + ")"
            return f"_concat({', '.join(parts)})"
        if op == "CONCAT_WS":
            return f"_concat_ws({', '.join(self._string(o) for o in operands)})"
        if op == "TRIM":
            mode, characters, trimmed = operands
            side = str(mode.value if isinstance(mode, Literal) else "BOTH")
            return f"_trim({self.rex(trimmed)}, {self.rex(characters)}, {side!r})"
        if op in _STRING_FUNCTIONS:
            return f"{_STRING_FUNCTIONS[op]}({', '.join(self.rex(o) for o in operands)})"
        if op == "LIKE":
            return f"_like({self.rex(operands[0])}, {self.rex(operands[1])})"
        if op == "ROUND":
            digits = self.rex(operands[1]) if len(operands) > 1 else "0"
            return f"_round({self.rex(operands[0])}, {digits}, {runtime_type(type_)!r})"
        if op in ("ABS", "FLOOR", "CEIL"):
            return f"_{op.lower()}({self.rex(operands[0])})"
        if op == "TO_TIMESTAMP_LTZ":
            precision = self.rex(operands[1]) if len(operands) > 1 else "3"
            return f"_to_timestamp_ltz({self.rex(operands[0])}, {precision})"
        if op == "PROCTIME":
            return "_proctime()"
        if op == "SEARCH":
            subject, sarg = operands
            assert isinstance(sarg, Literal) and isinstance(sarg.value, tuple)
            ranges = sarg_ranges(str(sarg.value[0]), subject.type)
            return f"_search({self.rex(subject)}, {self.constant(ranges)})"
        raise TableException(f"flowmagic cannot run the SQL function {op} yet")

    def _arithmetic(self, op: str, call: Call) -> str:
        left_rex, right_rex = call.operands
        type_ = call.type
        name = _ARITHMETIC_NAMES[op]
        if type_.is_interval or left_rex.type.is_interval or right_rex.type.is_interval:
            # Time plus an interval: both are milliseconds (months are not a fixed length).
            left, right = self.rex(left_rex), self.rex(right_rex)
            return f"_{name}({left}, {right})" if self._nullable(left_rex, right_rex) else f"({left} {op} {right})"
        if type_.name in _INTEGERS:
            left, right = self.rex(left_rex), self.rex(right_rex)
            bits = _INTEGERS[type_.name]
            if self._nullable(left_rex, right_rex):
                return f"_{name}{bits}({left}, {right})"
            return f"_wrap{bits}({left} {op} {right})"
        if type_.name == "DECIMAL":
            left, right = self.rex(left_rex), self.rex(right_rex)
            return f"_decimal_{name}({left}, {right}, {type_.precision}, {type_.scale})"
        left, right = self._as(left_rex, type_), self._as(right_rex, type_)
        if self._nullable(left_rex, right_rex):
            return f"_{name}({left}, {right})"
        return f"({left} {op} {right})"

    def _divide(self, call: Call) -> str:
        left_rex, right_rex = call.operands
        type_ = call.type
        if type_.name in _INTEGERS:
            return f"_idiv{_INTEGERS[type_.name]}({self.rex(left_rex)}, {self.rex(right_rex)})"
        if type_.name == "DECIMAL":
            left, right = self.rex(left_rex), self.rex(right_rex)
            return f"_decimal_divide({left}, {right}, {type_.precision}, {type_.scale})"
        if type_.is_interval or left_rex.type.is_interval:
            return f"_idiv64({self.rex(left_rex)}, {self.rex(right_rex)})"
        return f"_fdiv({self._as(left_rex, type_)}, {self._as(right_rex, type_)})"

    def _case(self, call: Call) -> str:
        operands = list(call.operands)
        otherwise = self._cast_to(operands[-1], call.type) if len(operands) % 2 else "None"
        pairs = [(operands[i], operands[i + 1]) for i in range(0, len(operands) - 1, 2)]
        text = otherwise
        for condition, branch in reversed(pairs):
            text = f"({self._cast_to(branch, call.type)} if {self.rex(condition)} else {text})"
        return text

    def _cast_to(self, rex: Rex, target: SqlType) -> str:
        """``rex`` as a value of ``target`` (a CASE branch of a wider type)."""
        source = rex.type
        if source.name == target.name and (source.name != "DECIMAL" or source.scale == target.scale):
            return self.rex(rex)
        if source.name == "NULL" or (isinstance(rex, Literal) and rex.value is None):
            return "None"
        if source.is_character and target.is_character:
            return self.rex(rex) if target.name == "VARCHAR" else self.cast(rex, target)
        return self.cast(rex, target)

    def _string(self, rex: Rex) -> str:
        if rex.type.is_character or rex.type.name == "NULL":
            return self.rex(rex)
        return self.cast(rex, SqlType("VARCHAR", 2147483647, nullable=rex.type.nullable))

    def cast(self, operand: Rex, target: SqlType) -> str:
        """CAST as Flink casts (its non-legacy behaviour): to STRING as it prints values,
        to CHAR(n) padded and to VARCHAR(n) cut, to numbers with Java's rules."""
        value = self.rex(operand)
        source = operand.type
        if source.name == "NULL":
            return "None"
        if target.is_character:
            zone = f", {self.zone!r}" if source.name == "TIMESTAMP_WITH_LOCAL_TIME_ZONE" else ""
            text = value if source.is_character else f"_to_string({value}, {runtime_type(source)!r}{zone})"
            if target.precision is not None and target.precision < 2147483647:
                function = "_pad" if target.name == "CHAR" else "_cut"
                return f"{function}({text}, {target.precision})"
            return text
        if target.name == source.name and target.name != "DECIMAL":
            return value
        if target.name in _INTEGERS:
            return f"_to_int({value}, {_INTEGERS[target.name]})"
        if target.name == "DECIMAL":
            return f"_to_decimal({value}, {target.precision}, {target.scale})"
        if target.name in _APPROX:
            return f"_float({value})"
        if target.name == "BOOLEAN":
            return f"_to_boolean({value})"
        if target.name in _TIMESTAMPS:
            return f"_to_timestamp({value}, {runtime_type(source)!r})"
        if target.name == "DATE":
            return f"_to_date({value}, {runtime_type(source)!r})"
        raise TableException(f"flowmagic cannot run CAST to {target.flink()} yet")


_COMPARE_NAMES = {"=": "eq", "<>": "ne", "<": "lt", ">": "gt", "<=": "le", ">=": "ge"}
_ARITHMETIC_NAMES = {"+": "add", "-": "sub", "*": "mul"}
_STRING_FUNCTIONS = {
    "UPPER": "_upper",
    "LOWER": "_lower",
    "CHAR_LENGTH": "_char_length",
    "CHARACTER_LENGTH": "_char_length",
    "SUBSTRING": "_substring",
    "REPLACE": "_replace",
    "LPAD": "_lpad",
    "RPAD": "_rpad",
}


def _sarg_value(text: str, type_: SqlType) -> Any:
    if text in ("-∞", "+∞"):
        return None
    if text.startswith("_UTF-16LE'"):
        text = text[len("_UTF-16LE") :]
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    if type_.name in _INTEGERS:
        return int(Decimal(text))
    if type_.name in _APPROX:
        return float(text)
    if type_.name == "DECIMAL":
        return Decimal(text)
    if type_.name == "BOOLEAN":
        return text == "true"
    return text


def sarg_ranges(text: str, type_: SqlType) -> tuple[tuple[Any, bool, Any, bool], ...]:
    """Calcite's Sarg text (``Sarg[1, 2]``, ``Sarg[[1..5)]``, ``Sarg[(-∞..1), (1..+∞)]``) as
    ranges ``(low, low inclusive, high, high inclusive)``, None for an unbounded side."""
    body = text[len("Sarg[") : -1]
    ranges = []
    for part in re.split(r", (?=[\[(])", body) if ".." in body else body.split(", "):
        if ".." not in part:
            point = _sarg_value(part, type_)
            ranges.append((point, True, point, True))
            continue
        low, high = part[1:-1].split("..", 1)
        ranges.append((_sarg_value(low, type_), part[0] == "[", _sarg_value(high, type_), part[-1] == "]"))
    return tuple(ranges)


def calc_code(projects: list[Rex], condition: Rex | None, zone: str = "UTC") -> Code:
    """``calc(rows) -> list``: the projected rows that pass ``condition`` (kinds kept)."""
    generator = ExpressionGenerator(zone)
    fields = [generator.rex(p) for p in projects]
    row = "(" + "".join(f"{f}, " for f in fields) + "r[-1])"
    lines = ["def calc(rows):", "    out = []", "    append = out.append", "    for r in rows:"]
    if condition is not None:
        lines.append(f"        if {generator.rex(condition)}:")
        lines.append(f"            append({row})")
    else:
        lines.append(f"        append({row})")
    lines.append("    return out")
    return generator.code("\n".join(lines) + "\n")


def expand_code(projections: list[list[Rex]], zone: str = "UTC") -> Code:
    """``expand(rows) -> list``: each row once per projection list."""
    generator = ExpressionGenerator(zone)
    lines = ["def expand(rows):", "    out = []", "    append = out.append", "    for r in rows:"]
    for projects in projections:
        fields = [generator.rex(p) for p in projects]
        lines.append("        append((" + "".join(f"{f}, " for f in fields) + "r[-1]))")
    lines.append("    return out")
    return generator.code("\n".join(lines) + "\n")


def scalar_code(name: str, rex: Rex, zone: str = "UTC") -> Code:
    """``<name>(r)``: the value of ``rex`` over row ``r``."""
    generator = ExpressionGenerator(zone)
    body = generator.rex(rex)
    return generator.code(f"def {name}(r):\n    return {body}\n")
