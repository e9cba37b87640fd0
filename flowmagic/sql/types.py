"""Calcite's SQL types as Flink's planner derives and prints them.

A type prints three ways: Calcite's short form (row types, ``CAST(x):TYPE`` digests use the full
form), the full form with character set and ``NOT NULL``, and Flink's logical type string.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

MAX_LENGTH = 2147483647
CHARSET = ' CHARACTER SET "UTF-16LE"'

_INTEGER_RANK = {"TINYINT": 1, "SMALLINT": 2, "INTEGER": 3, "BIGINT": 4}
_APPROX_RANK = {"REAL": 5, "FLOAT": 6, "DOUBLE": 7}
_FLINK_NAMES = {"INTEGER": "INT", "TIMESTAMP_WITH_LOCAL_TIME_ZONE": "TIMESTAMP_LTZ", "REAL": "FLOAT"}
_WITH_PRECISION = {"CHAR", "VARCHAR", "TIMESTAMP", "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "TIME"}


@dataclass(frozen=True)
class SqlType:
    """A Calcite ``RelDataType``: its type name, precision and scale, nullability, and whether it
    is a time attribute (``*ROWTIME*`` or ``*PROCTIME*``, streaming only)."""

    name: str
    precision: int | None = None
    scale: int | None = None
    nullable: bool = True
    time_attribute: str | None = None

    def with_nullable(self, nullable: bool) -> SqlType:
        return replace(self, nullable=nullable)

    def without_time_attribute(self) -> SqlType:
        return replace(self, time_attribute=None)

    @property
    def is_character(self) -> bool:
        return self.name in ("CHAR", "VARCHAR")

    @property
    def is_numeric(self) -> bool:
        return self.name in _INTEGER_RANK or self.name in _APPROX_RANK or self.name == "DECIMAL"

    @property
    def is_interval(self) -> bool:
        return self.name.startswith("INTERVAL")

    def short(self) -> str:
        """Calcite's digest of the type, as row types print it."""
        if self.time_attribute:
            return f"TIMESTAMP_LTZ({self.precision}) *{self.time_attribute}*"
        if self.name == "DECIMAL":
            return f"DECIMAL({self.precision}, {self.scale})"
        if self.name in _WITH_PRECISION and self.precision is not None:
            return f"{self.name}({self.precision})"
        return self.name

    def full(self, charset: bool = True, not_null: bool = True) -> str:
        """The full digest (``CAST(x):VARCHAR(2147483647) CHARACTER SET "UTF-16LE" NOT NULL``)."""
        text = self.short()
        if charset and self.is_character:
            text += CHARSET
        if not_null and not self.nullable:
            text += " NOT NULL"
        return text

    def flink(self) -> str:
        """Flink's logical type string (``INT``, ``STRING``, ``BIGINT NOT NULL``)."""
        if self.name == "VARCHAR" and self.precision == MAX_LENGTH:
            text = "STRING"
        elif self.time_attribute:
            text = self.short()
        elif self.name == "DECIMAL":
            text = f"DECIMAL({self.precision}, {self.scale})"
        else:
            name = _FLINK_NAMES.get(self.name, self.name)
            text = f"{name}({self.precision})" if self.name in _WITH_PRECISION else name
        return text if self.nullable else text + " NOT NULL"

    def serializable(self) -> object:
        """The type as Flink's compiled plan writes it (``VARCHAR(2147483647)``, not ``STRING``)."""
        if self.time_attribute:
            nullability = {} if self.nullable else {"nullable": False}
            return {
                "type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
                **nullability,
                "precision": self.precision,
                "kind": self.time_attribute,
            }
        if self.name == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
            text = f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"
        elif self.name == "VARCHAR":
            text = f"VARCHAR({self.precision})"
        else:
            return self.flink()
        return text if self.nullable else text + " NOT NULL"


INTEGER = SqlType("INTEGER")
BIGINT = SqlType("BIGINT")
BOOLEAN = SqlType("BOOLEAN")
STRING = SqlType("VARCHAR", MAX_LENGTH)


def _decimal_of(type_: SqlType) -> tuple[int, int]:
    if type_.name == "DECIMAL":
        return type_.precision or 10, type_.scale or 0
    return {"TINYINT": (3, 0), "SMALLINT": (5, 0), "INTEGER": (10, 0), "BIGINT": (19, 0)}[type_.name]


def least_restrictive(types: list[SqlType]) -> SqlType:
    """The type of a VALUES column or a UNION: Calcite's rule with Flink's ragged CHARs as VARCHAR."""
    nullable = any(t.nullable for t in types)
    first = types[0]
    if all(t.is_character for t in types):
        length = max(t.precision or 1 for t in types)
        if all(t.name == "CHAR" and t.precision == first.precision for t in types):
            return SqlType("CHAR", length, nullable=nullable)
        return SqlType("VARCHAR", length, nullable=nullable)
    if all(t.is_numeric for t in types):
        approx = [t for t in types if t.name in _APPROX_RANK]
        if approx:
            return max(approx, key=lambda t: _APPROX_RANK[t.name]).with_nullable(nullable)
        if any(t.name == "DECIMAL" for t in types):
            parts = [_decimal_of(t) for t in types]
            scale = max(s for _, s in parts)
            digits = max(p - s for p, s in parts)
            return SqlType("DECIMAL", min(38, digits + scale), scale, nullable)
        return max(types, key=lambda t: _INTEGER_RANK[t.name]).with_nullable(nullable)
    non_null = [t for t in types if t.name != "NULL"]
    return (non_null[0] if non_null else first).without_time_attribute().with_nullable(nullable)


def _adjusted_decimal(precision: int, scale: int, nullable: bool) -> SqlType:
    """Flink's LogicalTypeMerging.adjustPrecisionScale: past 38 digits the integral part is kept
    and the scale gives way, down to 6 digits."""
    if precision <= 38:
        return SqlType("DECIMAL", precision, scale, nullable)
    return SqlType("DECIMAL", 38, max(38 - (precision - scale), min(scale, 6)), nullable)


def arithmetic(operator: str, left: SqlType, right: SqlType) -> SqlType:
    """``+ - * / %`` of two operands (Calcite's return type inference with Flink's type system)."""
    nullable = left.nullable or right.nullable
    if left.is_interval or right.is_interval:
        base = right if left.is_interval else left
        return base.with_nullable(nullable)
    if left.name in ("TIMESTAMP", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return left.with_nullable(nullable)
    if left.name in _APPROX_RANK or right.name in _APPROX_RANK:
        # An approximate operand makes the result approximate (Calcite's leastRestrictive), a
        # DECIMAL one included: DECIMAL(5, 2) * DOUBLE is DOUBLE.
        return least_restrictive([left, right]).with_nullable(nullable)
    if left.name == "DECIMAL" or right.name == "DECIMAL":
        (p1, s1), (p2, s2) = _decimal_of(left), _decimal_of(right)
        if operator in ("+", "-"):
            scale = max(s1, s2)
            precision = max(p1 - s1, p2 - s2) + scale + 1
        elif operator == "*":
            # Flink's findMultiplicationDecimalType: one digit more than Calcite's.
            precision, scale = p1 + p2 + 1, s1 + s2
        else:
            scale = max(6, s1 + p2 + 1)
            precision = p1 - s1 + s2 + scale
        return _adjusted_decimal(precision, scale, nullable)
    return least_restrictive([left, right]).with_nullable(nullable)
