"""Validation and SqlToRel conversion: a parsed query to Calcite's logical plan, resolving names
and deriving types as Flink's validator does, and the validator's expanded query text (the job
name of a SELECT).

Calcite's conversion keeps the projection of every SELECT list (even an identity one) except
after an aggregate, where an identity projection is left out; the projection before an aggregate
(group keys, then the arguments of the aggregate calls) is also left out when it is the identity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from sqlglot import exp

from flowmagic.sql import catalog as cat
from flowmagic.sql import connectors
from flowmagic.sql.dialect import Descriptor, TableArgument, TableFunctionCall
from flowmagic.sql.errors import ValidationException
from flowmagic.sql.logical import (
    AggCall,
    Field,
    LogicalAggregate,
    LogicalFilter,
    LogicalJoin,
    LogicalProject,
    LogicalSink,
    LogicalSort,
    LogicalTableFunctionScan,
    LogicalTableScan,
    LogicalUnion,
    LogicalValues,
    LogicalWatermarkAssigner,
    RelNode,
    WindowSpec,
    join_fields,
    unique_names,
)
from flowmagic.sql.rex import Call, InputRef, Literal, OrderKey, Over, Rex, conjunctions, inputs_used, shift
from flowmagic.sql.rex_simplify import simplify_preserving_type
from flowmagic.sql.types import (
    BIGINT,
    BOOLEAN,
    INTEGER,
    STRING,
    SqlType,
    arithmetic,
    least_restrictive,
)


def _is_literal(node: exp.Expr) -> bool:
    """A literal as the parser sees it (a signed number included): Calcite keeps a VALUES of
    such rows a Values, any other expression makes it a union of projections."""
    if isinstance(node, exp.Neg):
        node = node.this
    return isinstance(node, exp.Literal | exp.Null | exp.Boolean)


def _cast_literal(target: SqlType, operand: Rex) -> Literal | None:
    """A cast of a NULL, or of an exact number that fits an integer or DECIMAL type, is made a
    literal of the target type while converting (Calcite's RexBuilder.makeCast, canRemoveCastFromLiteral)."""
    if not isinstance(operand, Literal):
        return None
    if operand.value is None:
        return Literal(target.with_nullable(True), None)
    bounds = {"TINYINT": 2**7, "SMALLINT": 2**15, "INTEGER": 2**31, "BIGINT": 2**63}
    if target.name in bounds and operand.type.name in bounds and isinstance(operand.value, int):
        fits = -bounds[target.name] <= operand.value < bounds[target.name]
        return Literal(target.with_nullable(False), operand.value) if fits else None
    if target.name == "DECIMAL" and operand.type.name in ("DECIMAL", "INTEGER", "BIGINT", "SMALLINT", "TINYINT"):
        value = Decimal(str(operand.value))
        precision, scale = target.precision or 10, target.scale or 0
        if len(value.as_tuple().digits) + min(value.as_tuple().exponent, 0) <= precision - scale:  # type: ignore[operator]
            return Literal(target.with_nullable(False), str(value))
    return None


_INTERVAL_MILLIS = {"SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}
_INTERVAL_MONTHS = {"MONTH": 1, "YEAR": 12}
_COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
}
_ARITHMETIC: dict[type[exp.Expr], str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/"}
_AGGREGATES: dict[type[exp.Expr], str] = {
    exp.Count: "COUNT",
    exp.Sum: "SUM",
    exp.Min: "MIN",
    exp.Max: "MAX",
    exp.Avg: "AVG",
}
_PRECEDENCE = {
    "OR": 1,
    "AND": 2,
    "=": 4,
    "<>": 4,
    ">": 4,
    ">=": 4,
    "<": 4,
    "<=": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "||": 6,
    "%": 6,
}
_WINDOW_SIZES = {"TUMBLE": 1, "HOP": 2, "CUMULATE": 2, "SESSION": 1}


def sql_type(data_type: exp.DataType, nullable: bool = True) -> SqlType:
    """A DDL or CAST type as Calcite sees it (``STRING`` is ``VARCHAR(2147483647)``)."""
    t = data_type.this
    if data_type.args.get("nested"):
        # ARRAY<..>, MAP<..>, MULTISET<..>: Flink has them, flowmagic's SQL not yet.
        shown = data_type.sql().replace("TEXT", "STRING")
        raise ValidationException(f"flowmagic's SQL does not support the type {shown} yet (Flink SQL does)")
    params = [int(p.this.this) if isinstance(p.this, exp.Literal) else int(p.name) for p in data_type.expressions]
    d = exp.DType
    if t in (d.INT,):
        return SqlType("INTEGER", nullable=nullable)
    simple = {d.BIGINT: "BIGINT", d.SMALLINT: "SMALLINT", d.TINYINT: "TINYINT", d.BOOLEAN: "BOOLEAN"}
    simple.update({d.DOUBLE: "DOUBLE", d.FLOAT: "REAL", d.DATE: "DATE"})
    if t in simple:
        return SqlType(simple[t], nullable=nullable)
    if t == d.TEXT:
        return STRING.with_nullable(nullable)
    if t in (d.VARCHAR, d.CHAR):
        name = "VARCHAR" if t == d.VARCHAR else "CHAR"
        return SqlType(name, params[0] if params else 1, nullable=nullable)
    if t == d.DECIMAL:
        precision = params[0] if params else 10
        return SqlType("DECIMAL", precision, params[1] if len(params) > 1 else 0, nullable)
    if t in (d.TIMESTAMP, d.DATETIME):
        return SqlType("TIMESTAMP", params[0] if params else 6, nullable=nullable)
    if t == d.TIMESTAMPLTZ:
        return SqlType("TIMESTAMP_WITH_LOCAL_TIME_ZONE", params[0] if params else 6, nullable=nullable)
    raise ValidationException(f"Unsupported type: {data_type.sql()}")


#: The type of a DataStream's ``rowtime`` metadata (Flink's ExternalDynamicSource).
ROWTIME_METADATA = SqlType("TIMESTAMP_WITH_LOCAL_TIME_ZONE", 3, nullable=False)


def quote(name: str) -> str:
    return f"`{name}`"


@dataclass
class Namespace:
    """A FROM item as the SELECT sees it: its alias, fields and their offset in the joined row."""

    alias: str
    fields: list[Field]
    offset: int


@dataclass
class Converted:
    rel: RelNode
    sql: str


class Scope:
    def __init__(self, namespaces: list[Namespace]) -> None:
        self.namespaces = namespaces

    @property
    def fields(self) -> list[Field]:
        return [f for ns in self.namespaces for f in ns.fields]

    def resolve(self, column: exp.Column) -> tuple[int, Field, str]:
        name, qualifier = column.name, column.table
        candidates = []
        for ns in self.namespaces:
            if qualifier and ns.alias.lower() != qualifier.lower():
                continue
            for i, f in enumerate(ns.fields):
                if f.name.lower() == name.lower():
                    candidates.append((ns.offset + i, f, ns.alias))
        if qualifier and not any(ns.alias.lower() == qualifier.lower() for ns in self.namespaces):
            raise ValidationException(f"{_position(column)}Table '{qualifier}' not found")
        if not candidates:
            where = f"table '{qualifier}'" if qualifier else "any table"
            raise ValidationException(f"{_position(column)}Column '{name}' not found in {where}")
        if len(candidates) > 1:
            raise ValidationException(f"{_position(column)}Column '{name}' is ambiguous")
        return candidates[0]


def _typed(columns: list[cat.Column]) -> list[tuple[str, str]]:
    """The physical columns' names and Flink types, as a connector's factory reads them."""
    return [(c.name, c.type.flink()) for c in columns if c.type is not None]


def _position(node: exp.Expr) -> str:
    """Calcite's validator prefix: where in the statement the offending name stands."""
    identifier = node.this if isinstance(node, exp.Column) else node
    meta = getattr(identifier, "meta", None) or {}
    line, col = meta.get("line"), meta.get("col")
    if line is None or col is None:
        return "SQL validation failed. "
    return _validation_prefix(line, col - len(identifier.name) + 1, line, col)


def _span(node: exp.Expr) -> str:
    """Calcite's validator prefix for an expression: from its first token to its last."""
    tokens = [n.meta for n in node.walk() if {"line", "col", "start", "end"} <= (getattr(n, "meta", None) or {}).keys()]
    if not tokens:
        return "SQL validation failed. "
    first = min(tokens, key=lambda m: m["start"])
    last = max(tokens, key=lambda m: m["end"])
    return _validation_prefix(first["line"], first["col"] - (first["end"] - first["start"]), last["line"], last["col"])


def _validation_prefix(line: int, column: int, end_line: int, end_column: int) -> str:
    """Calcite's validator prefix for the text from ``line``, ``column`` to ``end_line``,
    ``end_column``."""
    return f"SQL validation failed. From line {line}, column {column} to line {end_line}, column {end_column}: "


def _literal(node: exp.Literal) -> Literal:
    if node.is_string:
        value = node.this
        return Literal(SqlType("CHAR", max(len(value), 1), nullable=False), value)
    text = node.this
    if "e" in text.lower():
        return Literal(SqlType("DOUBLE", nullable=False), _scientific(Decimal(text)))
    if "." in text:
        # Calcite's exact numeric literal: every digit written counts towards the precision
        # (0.005 is DECIMAL(4, 3)), the digits after the point are the scale.
        digits = text.lstrip("+-").replace(".", "")
        scale = len(text) - text.index(".") - 1
        return Literal(SqlType("DECIMAL", max(len(digits), scale, 1), scale, nullable=False), text)
    value = int(text)
    return Literal(SqlType("INTEGER" if -(2**31) <= value < 2**31 else "BIGINT", nullable=False), value)


def _scientific(value: Decimal) -> str:
    """An approximate literal as Calcite writes it (``Util.toScientificNotation``): one digit
    before the point, trailing zeros dropped, ``0.5e0`` is ``5E-1``."""
    if value == 0:
        return "0E0"
    sign, digits, exponent = value.normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}E{len(digits) - 1 + exponent}"


def interval(node: exp.Interval) -> Literal:
    unit = node.unit.name.upper() if node.unit else "SECOND"
    unit = unit.removesuffix("S")
    amount = int(str(node.this.name))
    if unit in _INTERVAL_MONTHS:
        return Literal(SqlType(f"INTERVAL {unit}", nullable=False), amount * _INTERVAL_MONTHS[unit])
    if unit not in _INTERVAL_MILLIS:
        raise ValidationException(f"Unsupported interval unit: {unit}")
    return Literal(SqlType(f"INTERVAL {unit}", nullable=False), amount * _INTERVAL_MILLIS[unit])


def _call_type(name: str, operands: list[Rex]) -> SqlType:
    nullable = any(o.type.nullable for o in operands)
    if name == "CONCAT":
        return STRING.with_nullable(nullable)
    if name in ("UPPER", "LOWER", "TRIM", "ABS", "FLOOR", "CEIL"):
        return operands[0].type.without_time_attribute()
    if name == "MOD":
        return operands[1].type.with_nullable(nullable)
    if name == "ROUND":
        return _round_type(operands, nullable)
    if name == "IF":
        # Flink's IF: the least restrictive of the two values, nullable when any operand is.
        return least_restrictive([o.type for o in operands[1:]]).with_nullable(nullable)
    if name in ("CHAR_LENGTH", "CHARACTER_LENGTH"):
        return SqlType("INTEGER", nullable=nullable)
    if name in ("SUBSTRING", "CONCAT_WS", "REPLACE", "LPAD", "RPAD"):
        return STRING.with_nullable(nullable)
    if name == "TO_TIMESTAMP_LTZ":
        precision = operands[1].value if len(operands) > 1 and isinstance(operands[1], Literal) else 3
        return SqlType("TIMESTAMP_WITH_LOCAL_TIME_ZONE", int(str(precision)), nullable=nullable)
    if name == "PROCTIME":
        return SqlType("TIMESTAMP_WITH_LOCAL_TIME_ZONE", 3, nullable=False, time_attribute="PROCTIME")
    if name in ("IS NULL", "IS NOT NULL"):
        return BOOLEAN.with_nullable(False)
    raise ValidationException(f"No match found for function signature {name}()")


def _round_type(operands: list[Rex], nullable: bool) -> SqlType:
    """ROUND(x[, r]) (Flink's ROUND_FUNCTION_NULLABLE): a DECIMAL keeps the digits left of the
    point, plus one a rounding may carry, and takes ``r`` as its scale when ``r`` cuts it; other
    types keep their own."""
    arg = operands[0].type.without_time_attribute()
    if arg.name != "DECIMAL" or len(operands) > 2:
        return arg.with_nullable(nullable)
    precision, scale = arg.precision or 10, arg.scale or 0
    digits = operands[1] if len(operands) == 2 else Literal(INTEGER, 0)
    if not isinstance(digits, Literal) or digits.value is None:
        raise ValidationException("ROUND's second argument must be an integer literal")
    round_to = int(str(digits.value))
    if round_to >= scale:
        return arg.with_nullable(nullable)
    if round_to < 0:
        return SqlType("DECIMAL", min(38, 1 + precision - scale), 0, nullable)
    return SqlType("DECIMAL", 1 + precision - scale + round_to, round_to, nullable)


_INTEGER_RANK = {"TINYINT": 1, "SMALLINT": 2, "INTEGER": 3, "BIGINT": 4}


def _coerce(left: Rex, right: Rex) -> tuple[Rex, Rex]:
    """Calcite's implicit cast of the narrower of two integer operands that are not literals."""
    if isinstance(left, Literal) or isinstance(right, Literal):
        return left, right
    a, b = _INTEGER_RANK.get(left.type.name), _INTEGER_RANK.get(right.type.name)
    if a is None or b is None or a == b:
        return left, right
    if a < b:
        return Call(right.type.with_nullable(left.type.nullable), "CAST", (left,)), right
    return left, Call(left.type.with_nullable(right.type.nullable), "CAST", (right,))


#: sqlglot's function classes whose Flink name differs from sqlglot's.
_FUNCTION_NAMES: dict[type[exp.Expr], str] = {
    exp.Concat: "CONCAT",
    exp.Length: "CHAR_LENGTH",
    exp.ConcatWs: "CONCAT_WS",
    exp.Substring: "SUBSTRING",
}


def _cast(rex: Rex, target: SqlType) -> Rex:
    target = target.with_nullable(rex.type.nullable)
    if isinstance(rex, Literal) and rex.value is not None:
        return Literal(target, rex.value)
    return Call(target, "CAST", (rex,))


def _fn_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).upper()
    assert isinstance(node, exp.Func)
    return node.sql_name().upper()


def _arguments(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Anonymous | exp.Concat | exp.ConcatWs):
        return list(node.expressions)
    if isinstance(node, exp.Round):
        return [a for a in (node.this, node.args.get("decimals")) if a is not None]
    if isinstance(node, exp.If):
        return [a for a in (node.this, node.args.get("true"), node.args.get("false")) if a is not None]
    if isinstance(node, exp.Substring):
        return [a for a in (node.this, node.args.get("start"), node.args.get("length")) if a is not None]
    args = [node.this] if node.this is not None else []
    return args + list(node.expressions)


def _join(left: RelNode, right: RelNode, fields: list[Field], condition: Rex | None, join_type: str) -> RelNode:
    """A LogicalJoin. Equality operands that are expressions over one side become fields of a
    projection below that side (Calcite's pushDownJoinConditions: named after the field they
    cast, made unique), and a projection on top restores the join's own fields."""
    width, right_width = len(left.fields), len(right.fields)

    def side_of(rex: Rex) -> int | None:
        used = inputs_used(rex)
        if used and max(used) < width:
            return 0
        if used and min(used) >= width:
            return 1
        return None

    def pushable(part: Rex) -> bool:
        if not (isinstance(part, Call) and part.operator == "=" and len(part.operands) == 2):
            return False
        a, b = part.operands
        sides = {side_of(a), side_of(b)}
        return sides == {0, 1} and not (isinstance(a, InputRef) and isinstance(b, InputRef))

    def local(rex: Rex) -> Rex:
        return shift(rex, lambda i: InputRef(right.fields[i - width].type, i - width))

    parts = conjunctions(condition) if condition is not None else []
    extras: tuple[list[Rex], list[Rex]] = ([], [])
    for part in parts:
        if not pushable(part):
            continue
        assert isinstance(part, Call)
        for operand in part.operands:
            if not isinstance(operand, InputRef):
                side = side_of(operand)
                assert side is not None
                expr = operand if side == 0 else local(operand)
                if expr not in extras[side]:
                    extras[side].append(expr)
    if not extras[0] and not extras[1]:
        return LogicalJoin([left, right], fields, condition=condition, join_type=join_type)
    added_left = len(extras[0])

    def moved(index: int) -> int:
        return index if index < width else index + added_left

    def position(operand: Rex) -> Rex:
        if isinstance(operand, InputRef):
            return InputRef(operand.type, moved(operand.index))
        if side_of(operand) == 0:
            return InputRef(operand.type, width + extras[0].index(operand))
        return InputRef(operand.type, width + added_left + right_width + extras[1].index(local(operand)))

    rewritten: list[Rex] = []
    for part in parts:
        if pushable(part):
            assert isinstance(part, Call)
            rewritten.append(Call(part.type, "=", tuple(position(o) for o in part.operands)))
        else:
            rewritten.append(shift(part, lambda i: InputRef((left.fields + right.fields)[i].type, moved(i))))

    def widen(rel: RelNode, added: list[Rex]) -> RelNode:
        if not added:
            return rel
        exprs: list[Rex] = [InputRef(f.type, i) for i, f in enumerate(rel.fields)] + added
        derived = [
            rel.fields[e.operands[0].index].name
            if isinstance(e, Call) and e.operator == "CAST" and isinstance(e.operands[0], InputRef)
            else f"$f{len(rel.fields) + i}"
            for i, e in enumerate(added)
        ]
        names = unique_names([f.name for f in rel.fields] + derived)
        return LogicalProject([rel], [Field(n, e.type) for n, e in zip(names, exprs, strict=True)], exprs)

    new_left, new_right = widen(left, extras[0]), widen(right, extras[1])
    inner = new_left.fields + new_right.fields
    names = unique_names([f.name for f in inner])
    join_condition = rewritten[0] if len(rewritten) == 1 else Call(BOOLEAN, "AND", tuple(rewritten))
    join = LogicalJoin(
        [new_left, new_right],
        [Field(n, f.type) for n, f in zip(names, inner, strict=True)],
        condition=join_condition,
        join_type=join_type,
    )
    restore: list[Rex] = [InputRef(f.type, moved(i)) for i, f in enumerate(fields)]
    return LogicalProject([join], fields, restore)


def _aggregates(node: exp.Expr) -> list[exp.Expr]:
    """The aggregate calls in ``node``, outside OVER windows (RANK() OVER is no aggregate)."""
    return [
        a for a in node.find_all(exp.AggFunc) if a.find_ancestor(exp.Window) is None and not isinstance(a, exp.Window)
    ]


def _called(node: exp.Expr) -> exp.Expr:
    """The aggregate function of a call, under its FILTER (WHERE ...) if it has one."""
    return node.this if isinstance(node, exp.Filter) else node


def _agg_type(function: str, arg: SqlType | None, grouped: bool) -> SqlType:
    if function == "COUNT":
        return BIGINT.with_nullable(False)
    assert arg is not None
    nullable = arg.nullable or not grouped
    base = arg.without_time_attribute()
    if function in ("SUM", "$SUM0"):
        if base.name == "DECIMAL":
            base = SqlType("DECIMAL", 38, base.scale)
        return base.with_nullable(nullable and function == "SUM")
    if function == "AVG" and base.name == "DECIMAL":
        return SqlType("DECIMAL", 38, max(6, base.scale or 0), nullable)
    return base.with_nullable(nullable)


class SqlToRel:
    """Converts one statement; ``streaming`` decides time attributes and watermark assigners."""

    def __init__(self, catalog: cat.Catalog, streaming: bool) -> None:
        self.catalog = catalog
        self.streaming = streaming
        self._expr_aliases = 0

    # --- queries ---------------------------------------------------------------------------

    def query(self, node: exp.Expr) -> Converted:
        if isinstance(node, exp.Subquery):
            return self.query(node.this)
        if isinstance(node, exp.Union):
            return self._union(node)
        if isinstance(node, exp.Select):
            return self._select(node)
        if isinstance(node, exp.Values):
            rel, sql = self._values(node)
            return Converted(rel, sql)
        raise ValidationException(f"Unsupported query: {node.sql()}")

    def insert(self, node: exp.Insert) -> tuple[RelNode, str]:
        table_node = node.this
        name = table_node.this.name if isinstance(table_node, exp.Schema) else table_node.name
        sink = self.catalog.lookup(name)
        if not isinstance(sink, cat.CatalogTable):
            raise ValidationException(f"Object '{name}' not found")
        traits = connectors.validate(cat.qualified(name), sink.options, _typed(sink.physical), source=False)
        converted = self.query(node.expression)
        rel = converted.rel
        columns = sink.physical
        qualified = cat.qualified(sink.name)
        if len(columns) != len(rel.fields):
            query_schema = ", ".join(f"{f.name}: {f.type.flink()}" for f in rel.fields)
            sink_schema = ", ".join(f"{c.name}: {c.type.flink() if c.type else ''}" for c in columns)
            raise ValidationException(
                f"Column types of query result and sink for '{qualified}' do not match.\n"
                f"Cause: Different number of columns.\n\nQuery schema: [{query_schema}]\n"
                f"Sink schema:  [{sink_schema}]"
            )
        needs_cast = any(
            c.type is not None and c.type.with_nullable(True) != f.type.without_time_attribute().with_nullable(True)
            for c, f in zip(columns, rel.fields, strict=True)
        )
        if needs_cast:
            exprs: list[Rex] = []
            for i, (c, f) in enumerate(zip(columns, rel.fields, strict=True)):
                ref: Rex = InputRef(f.type, i)
                assert c.type is not None
                if c.type.with_nullable(True) != f.type.with_nullable(True):
                    ref = Call(c.type.with_nullable(f.type.nullable), "CAST", (ref,))
                exprs.append(ref)
            rel = LogicalProject([rel], [Field(c.name, e.type) for c, e in zip(columns, exprs, strict=True)], exprs)
        fields = list(rel.fields)
        sink_node = LogicalSink(
            [rel], fields, table=qualified, connector=traits.identifier, accepts=traits.changelog_mode
        )
        return sink_node, f"insert-into_{qualified}"

    def _union(self, node: exp.Union) -> Converted:
        if node.args.get("distinct"):
            raise ValidationException("UNION (distinct) is not supported yet; use UNION ALL")
        left = self.query(node.this)
        right = self.query(node.expression)
        if len(left.rel.fields) != len(right.rel.fields):
            raise ValidationException("Column count mismatch in UNION ALL")
        fields = [
            Field(a.name, least_restrictive([a.type.without_time_attribute(), b.type.without_time_attribute()]))
            for a, b in zip(left.rel.fields, right.rel.fields, strict=True)
        ]
        return Converted(LogicalUnion([left.rel, right.rel], fields), f"{left.sql}\nUNION ALL\n{right.sql}")

    def _values(self, node: exp.Values) -> tuple[RelNode, str]:
        alias = node.args.get("alias")
        rows: list[list[Rex]] = []
        texts = []
        for row in node.expressions:
            items = list(row.expressions) if isinstance(row, exp.Tuple) else [row]
            rows.append([self.rex(item, Scope([])) for item in items])
            texts.append("ROW(" + ", ".join(self.sql(i, Scope([])) for i in items) + ")")
        width = len(rows[0])
        names = [c.name for c in alias.columns] if alias is not None and alias.columns else []
        sql = "(VALUES " + ", ".join(texts) + ")"
        if alias is not None and alias.name:
            sql += f" AS {quote(alias.name)} (" + ", ".join(quote(n) for n in names) + ")"
        generated = [f"EXPR${i}" for i in range(width)]
        if all(
            _is_literal(item)
            for row in node.expressions
            for item in (row.expressions if isinstance(row, exp.Tuple) else [row])
        ):
            fields = [
                Field((names or generated)[i], least_restrictive([r[i].type for r in rows])) for i in range(width)
            ]
            return LogicalValues([], fields, rows=rows), sql  # type: ignore[arg-type]
        # Rows holding expressions: Calcite projects each row over a one-row Values and unions them.
        branches: list[RelNode] = []
        for row in rows:
            one = LogicalValues([], [Field("ZERO", INTEGER.with_nullable(False))], rows=[[Literal(INTEGER, 0)]])
            branches.append(LogicalProject([one], [Field(n, r.type) for n, r in zip(generated, row, strict=True)], row))
        fields = [Field(generated[i], least_restrictive([r[i].type for r in rows])) for i in range(width)]
        rel: RelNode = branches[0] if len(branches) == 1 else LogicalUnion(branches, fields)
        if names:
            refs: list[Rex] = [InputRef(f.type, i) for i, f in enumerate(fields)]
            rel = LogicalProject([rel], [Field(n, f.type) for n, f in zip(names, fields, strict=True)], refs)
        return rel, sql

    # --- FROM ------------------------------------------------------------------------------

    def _next_alias(self) -> str:
        alias = f"EXPR${self._expr_aliases}"
        self._expr_aliases += 1
        return alias

    def _from_item(self, node: exp.Expr) -> tuple[RelNode, str, str]:
        """(relation, alias, expanded SQL) of one FROM item."""
        if isinstance(node, exp.Table) and not isinstance(node.this, exp.Values):
            alias = node.alias or node.name
            rel = self._table(node)
            sql = ".".join(quote(p) for p in cat.path(node.name)) + f" AS {quote(alias)}"
            return rel, alias, sql
        if isinstance(node, exp.Values):
            rel, sql = self._values(node)
            return rel, node.alias or self._next_alias(), sql
        if isinstance(node, exp.Subquery):
            inner = node.this
            if isinstance(inner, exp.Values):
                if node.alias and not inner.args.get("alias"):
                    inner.set("alias", node.args.get("alias"))
                rel, sql = self._values(inner)
                return rel, node.alias or self._next_alias(), sql
            alias = node.alias or self._next_alias()
            converted = self.query(inner)
            return converted.rel, alias, f"({converted.sql}) AS {quote(alias)}"
        if isinstance(node, TableFunctionCall):
            return self._window_tvf(node)
        raise ValidationException(f"Unsupported FROM item: {node.sql()}")

    def _table(self, node: exp.Table) -> RelNode:
        return self.table(node.name, node.this)

    def table(self, name: str, at: exp.Expr | None = None, as_source: bool = True) -> RelNode:
        """A table or view read by a query (a view is expanded into its query)."""
        obj = self.catalog.lookup(name)
        if obj is None:
            where = _position(at) if at is not None else "SQL validation failed. "
            raise ValidationException(f"{where}Object '{name}' not found")
        if isinstance(obj, cat.CatalogView):
            converted = SqlToRel(self.catalog, self.streaming).query(obj.query)
            return converted.rel
        filter_push_down = reads_metadata = projection_push_down = False
        extras: tuple[str, ...] = ()
        row_count = None
        path: tuple[str, ...]
        if isinstance(obj, cat.CatalogDataStream):
            if as_source and not self.streaming and not obj.bounded:
                raise ValidationException(
                    f"Querying an unbounded table '{obj.identifier}' in batch mode is not allowed. "
                    "The table source is unbounded."
                )
            # The rowtime metadata column comes from the source as its metadata type, cast to
            # the declared one by the projection above the scan.
            scanned = obj.physical + [
                cat.Column(c.name, ROWTIME_METADATA) for c in obj.columns if c.name == obj.rowtime
            ]
            path = cat.path(name) if obj.identifier != obj.name else (obj.name,)
            extras = ("metadata=[rowtime]",) if obj.rowtime is not None else ()
        elif as_source:
            traits = connectors.validate(cat.qualified(name), obj.options, _typed(obj.physical), source=True)
            if not self.streaming and not traits.bounded:
                raise ValidationException(
                    f"Querying an unbounded table '{cat.qualified(name)}' in batch mode is not allowed. "
                    "The table source is unbounded."
                )
            filter_push_down = traits.filter_push_down
            reads_metadata = traits.identifier == "filesystem"
            projection_push_down = traits.projection_push_down
            # Flink's batch planner asks the source for statistics; the streaming one does not.
            row_count = None if self.streaming else traits.row_count
        if not isinstance(obj, cat.CatalogDataStream):
            scanned, path = obj.physical, cat.path(name)
        physical = [Field(c.name, c.type) for c in scanned if c.type is not None]
        rel: RelNode = LogicalTableScan(
            [],
            physical,
            path=path,
            filter_push_down=filter_push_down,
            projection_push_down=projection_push_down,
            reads_metadata=reads_metadata,
            columns=len(physical),
            extras=extras,
            all_kinds=isinstance(obj, cat.CatalogDataStream) and obj.changelog,
            row_count=row_count,
        )
        rowtime_column = obj.watermark[0] if self.streaming and obj.watermark is not None else None
        metadata_cast = isinstance(obj, cat.CatalogDataStream) and obj.rowtime is not None
        if len(physical) != len(obj.columns) or metadata_cast:
            scope = Scope([Namespace(name, physical, 0)])
            exprs: list[Rex] = []
            for column in obj.columns:
                if column.expression is None:
                    index = next(i for i, f in enumerate(physical) if f.name == column.name)
                    ref = InputRef(physical[index].type, index)
                    if column.type is not None and column.type != ref.type:
                        declared = column.type
                        if column.name == rowtime_column:
                            declared = SqlType(declared.name, declared.precision, time_attribute="ROWTIME")
                        exprs.append(Call(declared, "CAST", (ref,)))
                    else:
                        exprs.append(ref)
                else:
                    expr = self.rex(column.expression, scope)
                    if not self.streaming and isinstance(expr, Call) and expr.type.time_attribute:
                        expr = Call(expr.type.without_time_attribute(), expr.operator, expr.operands)
                    exprs.append(expr)
            fields = [Field(c.name, e.type) for c, e in zip(obj.columns, exprs, strict=True)]
            rel = LogicalProject([rel], fields, exprs)
        if self.streaming and obj.watermark is not None:
            column_name, expression = obj.watermark
            index = next(i for i, f in enumerate(rel.fields) if f.name == column_name)
            if isinstance(obj, cat.CatalogDataStream) and obj.source_watermark:
                watermark: Rex = Call(ROWTIME_METADATA, "SOURCE_WATERMARK")
            else:
                watermark = self.rex(expression, Scope([Namespace(name, rel.fields, 0)]))
            fields = list(rel.fields)
            rowtime = fields[index].type
            fields[index] = Field(
                column_name,
                SqlType(rowtime.name, rowtime.precision, nullable=rowtime.nullable, time_attribute="ROWTIME"),
            )
            rel = LogicalWatermarkAssigner([rel], fields, rowtime=index, watermark=watermark)
        return rel

    def _window_tvf(self, node: TableFunctionCall) -> tuple[RelNode, str, str]:
        kind = node.this.name.upper()
        if kind not in _WINDOW_SIZES:
            raise ValidationException(f"No match found for function signature {kind}")
        args = list(node.expressions)
        if (
            len(args) < 2 + _WINDOW_SIZES[kind]
            or not isinstance(args[0], TableArgument)
            or not isinstance(args[1], Descriptor)
        ):
            raise ValidationException(
                f"Invalid number of arguments to function '{kind}'. Was expecting {2 + _WINDOW_SIZES[kind]} arguments"
            )
        table_arg: TableArgument = args[0]
        table = table_arg.this
        inner_rel = self._table(table)
        table_alias = table.alias or table.name
        inner_names = inner_rel.names
        select_sql = (
            "(SELECT "
            + ", ".join(f"{quote(table_alias)}.{quote(n)}" for n in inner_names)
            + "\nFROM "
            + ".".join(quote(p) for p in cat.path(table.name))
            + f" AS {quote(table_alias)})"
        )
        project = LogicalProject(
            [inner_rel], list(inner_rel.fields), [InputRef(f.type, i) for i, f in enumerate(inner_rel.fields)]
        )
        descriptor: Descriptor = args[1]
        time_name = descriptor.expressions[0].name
        time_index = next((i for i, n in enumerate(inner_names) if n.lower() == time_name.lower()), None)
        if time_index is None:
            raise ValidationException(f"Column '{time_name}' not found in table '{table_alias}'")
        time_type = inner_rel.fields[time_index].type
        if self.streaming and time_type.time_attribute is None:
            raise ValidationException(
                f"The window function requires the timecol is a time attribute type, but is {time_type.flink()}."
            )
        sizes = tuple(interval(a) for a in args[2:] if isinstance(a, exp.Interval))
        partition: tuple[int, ...] = ()
        if table_arg.args.get("partition_by"):
            scope = Scope([Namespace(table_alias, inner_rel.fields, 0)])
            partition = tuple(scope.resolve(c)[0] for c in table_arg.args["partition_by"])
        window_time = time_type.with_nullable(False)
        fields = [
            *inner_rel.fields,
            Field("window_start", SqlType("TIMESTAMP", 3, nullable=False)),
            Field("window_end", SqlType("TIMESTAMP", 3, nullable=False)),
            Field("window_time", window_time),
        ]
        spec = WindowSpec(kind, time_index, time_name, sizes, partition)
        rel = LogicalTableFunctionScan([project], fields, window=spec)
        alias = node.alias or self._next_alias()
        size_sql = ", ".join(self.sql(a, Scope([])) for a in args[2:])
        partition_sql = ""
        if partition:
            partition_sql = " PARTITION BY " + ", ".join(quote(inner_names[p]) for p in partition)
        sql = (
            f"TABLE({kind}({select_sql}{partition_sql}, DESCRIPTOR({quote(time_name)}), {size_sql})) AS {quote(alias)}"
        )
        return rel, alias, sql

    def _from(self, select: exp.Select) -> tuple[RelNode, Scope, str]:
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is None:
            # Calcite reads a SELECT without FROM from one row of one column: VALUES (0) AS ZERO.
            zero = Literal(SqlType("INTEGER", nullable=False), 0)
            return LogicalValues([], [Field("ZERO", zero.type)], rows=[[zero]]), Scope([]), ""
        rel, alias, sql = self._from_item(from_.this)
        namespaces = [Namespace(alias, list(rel.fields), 0)]
        for join in select.args.get("joins") or []:
            right, right_alias, right_sql = self._from_item(join.this)
            offset = len(rel.fields)
            namespaces.append(Namespace(right_alias, list(right.fields), offset))
            scope = Scope(namespaces)
            side = (join.side or "").upper()
            kind = (join.kind or "").upper()
            on = join.args.get("on")
            join_type = {"LEFT": "left", "RIGHT": "right", "FULL": "full"}.get(side, "inner")
            condition = self.rex(on, scope) if on is not None else None
            # The join's row type has unique names (Calcite's uniquify); the scope keeps the
            # names the query uses.
            joined = join_fields(list(rel.fields), list(right.fields), join_type)
            rel = _join(rel, right, joined, condition, join_type)
            if on is None and not side and kind != "CROSS" and not join.args.get("kind"):
                sql += f",\n{right_sql}"
            else:
                keyword = f"{side} JOIN" if side else ("CROSS JOIN" if kind == "CROSS" else "INNER JOIN")
                sql += f"\n{keyword} {right_sql}" + (f" ON {self.sql(on, scope)}" if on is not None else "")
            namespaces = [
                Namespace(
                    ns.alias,
                    [Field(f.name, t.type) for f, t in zip(ns.fields, joined[ns.offset :], strict=False)],
                    ns.offset,
                )
                for ns in namespaces
            ]
        return rel, Scope(namespaces), sql

    # --- SELECT ----------------------------------------------------------------------------

    def _select_items(self, select: exp.Select, scope: Scope) -> list[tuple[exp.Expr, str, str]]:
        """(expression, output name, expanded SQL) of each SELECT item, ``*`` expanded."""
        items: list[tuple[exp.Expr, str, str]] = []
        for position, item in enumerate(select.expressions):
            node = item.this if isinstance(item, exp.Alias) else item
            if isinstance(node, exp.Star) or (isinstance(node, exp.Column) and isinstance(node.this, exp.Star)):
                qualifier = node.table if isinstance(node, exp.Column) else ""
                for ns in scope.namespaces:
                    if qualifier and ns.alias != qualifier:
                        continue
                    for f in ns.fields:
                        column = exp.Column(this=exp.to_identifier(f.name), table=exp.to_identifier(ns.alias))
                        items.append((column, f.name, f"{quote(ns.alias)}.{quote(f.name)}"))
                continue
            text = self.sql(node, scope)
            if isinstance(item, exp.Alias):
                name = item.alias
                if not (isinstance(node, exp.Column) and node.name == name):
                    text += f" AS {quote(name)}"
            elif isinstance(node, exp.Column):
                name = node.name
            else:
                name = f"EXPR${position}"
                text += f" AS {quote(name)}"
            items.append((node, name, text))
        return items

    def _select(self, select: exp.Select) -> Converted:
        rel, scope, from_sql = self._from(select)
        sql_lines = []
        where = select.args.get("where")
        if where is not None:
            condition = self.rex(where.this, scope)
            rel = LogicalFilter([rel], list(rel.fields), condition=condition)
        items = self._select_items(select, scope)
        group = select.args.get("group")
        having = select.args.get("having")
        if select.args.get("distinct") is not None and group is None:
            group = exp.Group(expressions=[node.copy() for node, _, _ in items])
        aggregating = group is not None or any(_aggregates(item) for item, _, _ in items)
        distinct = "DISTINCT " if select.args.get("distinct") is not None else ""
        sql_lines.append(f"SELECT {distinct}" + ", ".join(text for _, _, text in items))
        if from_sql:
            sql_lines.append(f"FROM {from_sql}")
        if where is not None:
            sql_lines.append(f"WHERE {self.sql(where.this, scope)}")
        names = [name for _, name, _ in items]
        if aggregating:
            rel = self._aggregate(rel, scope, items, group, having)
            if group is not None and not distinct:
                sql_lines.append("GROUP BY " + ", ".join(self.sql(g, scope) for g in group.expressions))
            if having is not None:
                sql_lines.append(f"HAVING {self.sql(having.this, scope)}")
        else:
            # RelBuilder.project simplifies what it projects.
            exprs = [simplify_preserving_type(self.rex(node, scope)) for node, _, _ in items]
            rel = LogicalProject([rel], [Field(n, e.type) for n, e in zip(names, exprs, strict=True)], exprs)
        order = select.args.get("order")
        limit = select.args.get("limit")
        offset = select.args.get("offset")
        if order is not None or limit is not None or offset is not None:
            keys = []
            order_sql = []
            for ordered in order.expressions if order is not None else []:
                keys.append(self._order_key(ordered, rel, items, scope))
                text = self._order_sql(ordered, items, scope)
                order_sql.append(text)
            if order_sql:
                sql_lines.append("ORDER BY " + ", ".join(order_sql))
            fetch = int(limit.expression.name) if limit is not None else None
            skip = int(offset.expression.name) if offset is not None else None
            if skip is not None:
                sql_lines.append(f"OFFSET {skip} ROWS")
            if fetch is not None:
                sql_lines.append(f"FETCH NEXT {fetch} ROWS ONLY")
            rel = LogicalSort([rel], list(rel.fields), keys=keys, offset=skip, fetch=fetch)
        return Converted(rel, "\n".join(sql_lines))

    def _order_key(
        self, ordered: exp.Ordered, rel: RelNode, items: list[tuple[exp.Expr, str, str]], scope: Scope
    ) -> tuple[int, bool, bool]:
        node = ordered.this
        descending = bool(ordered.args.get("desc"))
        nulls_first = ordered.args.get("nulls_first")
        nulls_last = descending if nulls_first is None else not nulls_first
        if isinstance(node, exp.Column) and not node.table:
            for i, (_, name, _) in enumerate(items):
                if name.lower() == node.name.lower():
                    return i, descending, nulls_last
        if isinstance(node, exp.Literal) and not node.is_string:
            return int(node.this) - 1, descending, nulls_last
        for i, (item, _, _) in enumerate(items):
            if item == node:
                return i, descending, nulls_last
        raise ValidationException(f"ORDER BY {node.sql()} must name a column of the SELECT list in flowmagic")

    def _order_sql(self, ordered: exp.Ordered, items: list[tuple[exp.Expr, str, str]], scope: Scope) -> str:
        node = ordered.this
        if isinstance(node, exp.Column) and not node.table and any(n == node.name for _, n, _ in items):
            text = quote(node.name)
        else:
            text = self.sql(node, scope)
        return text + (" DESC" if ordered.args.get("desc") else "")

    def _aggregate(
        self,
        rel: RelNode,
        scope: Scope,
        items: list[tuple[exp.Expr, str, str]],
        group: exp.Group | None,
        having: exp.Having | None,
    ) -> RelNode:
        group_rex = [self.rex(g, scope) for g in (group.expressions if group is not None else [])]
        pre: list[Rex] = list(group_rex)
        pre_names: list[str] = []

        def pre_index(rex: Rex) -> int:
            if rex in pre:
                return pre.index(rex)
            pre.append(rex)
            return len(pre) - 1

        # Per call: the node standing for it (its FILTER when it has one), its name, arguments,
        # DISTINCT and filter column.
        calls: list[tuple[exp.Expr, str, tuple[int, ...], bool, int | None]] = []
        same_calls: dict[int, exp.Expr] = {}
        aliases = {id(node): name for node, name, _ in items}
        sources = [node for node, _, _ in items] + ([having.this] if having is not None else [])
        for source in sources:
            for agg in _aggregates(source):
                owner = agg.parent if isinstance(agg.parent, exp.Filter) and agg.parent.this is agg else None
                node = owner or agg
                if any(node is c[0] for c in calls):
                    continue
                function = _AGGREGATES.get(type(agg))
                if function is None:
                    raise ValidationException(f"Unsupported aggregate function: {_fn_name(agg)}")
                arg = agg.this
                distinct = isinstance(arg, exp.Distinct)
                if distinct:
                    arg = arg.expressions[0]
                args: tuple[int, ...] = ()
                if not isinstance(arg, exp.Star) and arg is not None:
                    rex = self.rex(arg, scope)
                    # Calcite counts the rows for COUNT of an argument that cannot be null.
                    if not (function == "COUNT" and not distinct and not rex.type.nullable):
                        args = (pre_index(rex),)
                # As Calcite's AggConverter: the condition is a column of the input projection
                # after the call's arguments, shared by equal conditions, IS TRUE when nullable.
                filter_arg = None
                if owner is not None:
                    condition_node = owner.expression.this
                    condition = self.rex(condition_node, scope)
                    if condition.type.name != "BOOLEAN":
                        raise ValidationException(f"{_span(condition_node)}FILTER clause must be a condition")
                    if condition.type.nullable:
                        condition = Call(BOOLEAN.with_nullable(False), "IS TRUE", (condition,))
                    filter_arg = pre_index(condition)
                key = (type(agg), args, distinct, filter_arg)
                same = next((c for c in calls if (type(_called(c[0])), c[2], c[3], c[4]) == key), None)
                if same is not None:
                    # An equal call (in HAVING, or written twice) is the same aggregate output.
                    same_calls[id(node)] = same[0]
                    continue
                calls.append((node, aliases.get(id(node), ""), args, distinct, filter_arg))
        input_fields = rel.fields
        # A computed group key takes the name of the select item computing it (Calcite's
        # AggConverter name map; the last such item wins).
        item_names: dict[Rex, str] = {}
        for node, name, _ in items:
            if not node.find(exp.AggFunc):
                item_names[self.rex(node, scope)] = name
        for i, rex in enumerate(pre):
            if isinstance(rex, InputRef):
                pre_names.append(input_fields[rex.index].name)
            else:
                pre_names.append(item_names.get(rex, f"$f{i}") if i < len(group_rex) else f"$f{i}")
        identity = len(pre) == len(input_fields) and all(
            isinstance(r, InputRef) and r.index == i for i, r in enumerate(pre)
        )
        if pre and not identity:
            rel = LogicalProject([rel], [Field(n, r.type) for n, r in zip(pre_names, pre, strict=True)], pre)
        grouped = bool(group_rex)
        agg_calls = []
        for position, (node, name, args, distinct, filter_arg) in enumerate(calls):
            function = _AGGREGATES[type(_called(node))]
            arg_type = rel.fields[args[0]].type if args else None
            agg_name = name or f"EXPR${position + len(group_rex)}"
            agg_type = _agg_type(function, arg_type, grouped)
            agg_calls.append(AggCall(function, args, distinct, agg_type, agg_name, filter=filter_arg))
        fields = [Field(rel.fields[i].name, rel.fields[i].type) for i in range(len(group_rex))]
        fields += [Field(c.name, c.type) for c in agg_calls]
        aggregate = LogicalAggregate([rel], fields, group=list(range(len(group_rex))), calls=agg_calls)

        def hook(node: exp.Expr) -> Rex | None:
            target = same_calls.get(id(node), node)
            for i, (call, _, _, _, _) in enumerate(calls):
                if target is call:
                    return InputRef(agg_calls[i].type, len(group_rex) + i)
            if isinstance(node, exp.AggFunc):
                return None
            if isinstance(node, exp.Column | exp.Binary | exp.Func | exp.Cast) and not node.find(exp.AggFunc):
                rex = self.rex(node, scope)
                if rex in group_rex:
                    i = group_rex.index(rex)
                    return InputRef(group_rex[i].type, i)
                if isinstance(node, exp.Column):
                    raise ValidationException(
                        f"{_position(node)}Expression '{'.'.join(p.name for p in node.parts)}' is not being grouped"
                    )
            return None

        result: RelNode = aggregate
        if having is not None:
            result = LogicalFilter([result], list(result.fields), condition=self.rex(having.this, scope, hook))
        exprs = [self.rex(node, scope, hook) for node, _, _ in items]
        names = [name for _, name, _ in items]
        if not (
            len(exprs) == len(result.fields)
            and all(isinstance(e, InputRef) and e.index == i for i, e in enumerate(exprs))
            and names == result.names
        ):
            result = LogicalProject([result], [Field(n, e.type) for n, e in zip(names, exprs, strict=True)], exprs)
        return result

    # --- expressions -----------------------------------------------------------------------

    def rex(self, node: exp.Expr, scope: Scope, hook: Callable[[exp.Expr], Rex | None] | None = None) -> Rex:
        """``node`` as a row expression over ``scope``'s joined row."""
        if hook is not None:
            found = hook(node)
            if found is not None:
                return found

        def sub(n: exp.Expr) -> Rex:
            return self.rex(n, scope, hook)

        if isinstance(node, exp.Paren):
            return sub(node.this)
        if isinstance(node, exp.Column):
            index, f, _ = scope.resolve(node)
            return InputRef(f.type, index)
        if isinstance(node, exp.Literal):
            return _literal(node)
        if isinstance(node, exp.Boolean):
            return Literal(BOOLEAN.with_nullable(False), bool(node.this))
        if isinstance(node, exp.Null):
            return Literal(SqlType("NULL"), None)
        if isinstance(node, exp.Interval):
            return interval(node)
        if isinstance(node, exp.Neg):
            operand = sub(node.this)
            if isinstance(operand, Literal) and isinstance(operand.value, int):
                return Literal(operand.type, -operand.value)
            return Call(operand.type, "-", (operand,))
        if type(node) in _ARITHMETIC:
            left, right = sub(node.this), sub(node.expression)
            operator = _ARITHMETIC[type(node)]
            result_type = arithmetic(operator, left.type, right.type)
            if left.type.time_attribute or right.type.time_attribute:
                result_type = result_type.without_time_attribute()
            return Call(result_type, operator, (left, right))
        if isinstance(node, exp.Mod):
            left, right = sub(node.this), sub(node.expression)
            return Call(_call_type("MOD", [left, right]), "MOD", (left, right))
        if type(node) in _COMPARISONS:
            left, right = _coerce(sub(node.this), sub(node.expression))
            nullable = left.type.nullable or right.type.nullable
            return Call(BOOLEAN.with_nullable(nullable), _COMPARISONS[type(node)], (left, right))
        if isinstance(node, exp.And | exp.Or):
            operator = "AND" if isinstance(node, exp.And) else "OR"
            operands: list[Rex] = []
            for part in (node.this, node.expression):
                rex = sub(part)
                if isinstance(rex, Call) and rex.operator == operator:
                    operands.extend(rex.operands)
                else:
                    operands.append(rex)
            nullable = any(o.type.nullable for o in operands)
            return Call(BOOLEAN.with_nullable(nullable), operator, tuple(operands))
        if isinstance(node, exp.Not) and isinstance(node.this, exp.Is):
            return Call(BOOLEAN.with_nullable(False), "IS NOT NULL", (sub(node.this.this),))
        if isinstance(node, exp.Not):
            operand = sub(node.this)
            return Call(operand.type, "NOT", (operand,))
        if isinstance(node, exp.Is):
            operand = sub(node.this)
            return Call(BOOLEAN.with_nullable(False), "IS NULL", (operand,))
        if isinstance(node, exp.Between):
            value, low, high = sub(node.this), sub(node.args["low"]), sub(node.args["high"])
            nullable = any(o.type.nullable for o in (value, low, high))
            parts = (
                Call(BOOLEAN.with_nullable(value.type.nullable or low.type.nullable), ">=", (value, low)),
                Call(BOOLEAN.with_nullable(value.type.nullable or high.type.nullable), "<=", (value, high)),
            )
            return Call(BOOLEAN.with_nullable(nullable), "AND", parts)
        if isinstance(node, exp.Cast):
            operand = sub(node.this)
            target = sql_type(node.to, operand.type.nullable)
            return _cast_literal(target, operand) or Call(target, "CAST", (operand,))
        if isinstance(node, exp.Case):
            return self._case(node, sub)
        if isinstance(node, exp.Coalesce):
            operands = [sub(a) for a in [node.this, *node.expressions]]
            result = least_restrictive([o.type for o in operands]).with_nullable(all(o.type.nullable for o in operands))
            cast = [
                o
                if o.type.with_nullable(True) == result.with_nullable(True) or o.type.is_character
                else _cast(o, result)
                for o in operands
            ]
            return Call(result, "COALESCE", tuple(cast))
        if isinstance(node, exp.In):
            value = sub(node.this)
            equalities: list[Rex] = []
            for item in node.expressions:
                other = sub(item)
                equalities.append(
                    Call(BOOLEAN.with_nullable(value.type.nullable or other.type.nullable), "=", (value, other))
                )
            if len(equalities) == 1:
                return equalities[0]
            return Call(BOOLEAN.with_nullable(value.type.nullable), "OR", tuple(equalities))
        if isinstance(node, exp.Like):
            left, right = sub(node.this), sub(node.expression)
            return Call(BOOLEAN.with_nullable(left.type.nullable or right.type.nullable), "LIKE", (left, right))
        if isinstance(node, exp.DPipe):
            left, right = sub(node.this), sub(node.expression)
            return Call(STRING.with_nullable(left.type.nullable or right.type.nullable), "||", (left, right))
        if isinstance(node, exp.Trim):
            operand = sub(node.this)
            both = Literal(SqlType("SYMBOL", nullable=False), "BOTH")
            space = Literal(SqlType("CHAR", 1, nullable=False), " ")
            return Call(operand.type.without_time_attribute(), "TRIM", (both, space, operand))
        if isinstance(node, exp.Window):
            return self._over(node, scope, hook)
        if isinstance(node, exp.AggFunc):
            raise ValidationException(f"Aggregate {node.sql_name()} is not allowed here")
        if isinstance(node, exp.Func):
            name = _FUNCTION_NAMES.get(type(node)) or _fn_name(node)
            operands = [sub(a) for a in _arguments(node)]
            return Call(_call_type(name, operands), name, tuple(operands))
        raise ValidationException(f"Unsupported expression: {node.sql()}")

    def _case(self, node: exp.Case, sub: Callable[[exp.Expr], Rex]) -> Rex:
        """CASE WHEN ... as Calcite's CASE(c1, v1, ..., else): values of the least restrictive
        type (character literals retyped), NULL when there is no ELSE."""
        subject = node.this
        # A simple CASE (``CASE x WHEN v ...``) compares its subject with each value.
        conditions = [
            sub(branch.this if subject is None else exp.EQ(this=subject.copy(), expression=branch.this.copy()))
            for branch in node.args.get("ifs") or []
        ]
        values = [sub(branch.args["true"]) for branch in node.args.get("ifs") or []]
        default = node.args.get("default")
        otherwise = sub(default) if default is not None else None
        candidates = values + ([otherwise] if otherwise is not None else [])
        result = least_restrictive([v.type for v in candidates if v.type.name != "NULL"])
        nullable = otherwise is None or any(v.type.nullable for v in candidates)
        result = result.with_nullable(nullable)
        if otherwise is None:
            otherwise = Literal(result.with_nullable(True), None)

        def fit(value: Rex) -> Rex:
            if value.type.with_nullable(True) == result.with_nullable(True):
                return value
            return _cast(value, result)

        operands: list[Rex] = []
        for condition, value in zip(conditions, values, strict=True):
            operands += [condition, fit(value)]
        operands.append(fit(otherwise))
        return Call(result, "CASE", tuple(operands))

    def _over(self, node: exp.Window, scope: Scope, hook: Callable[[exp.Expr], Rex | None] | None) -> Rex:
        function = node.this
        name = {exp.RowNumber: "ROW_NUMBER", exp.Rank: "RANK", exp.DenseRank: "DENSE_RANK"}.get(
            type(function), _fn_name(function)
        )
        if name not in ("ROW_NUMBER", "RANK", "DENSE_RANK"):
            raise ValidationException(f"Unsupported OVER function: {name}")
        partition = tuple(self.rex(p, scope, hook) for p in node.args.get("partition_by") or [])
        keys = []
        order = node.args.get("order")
        for ordered in order.expressions if order is not None else []:
            descending = bool(ordered.args.get("desc"))
            nulls_first = ordered.args.get("nulls_first")
            nulls_last = descending if nulls_first is None else not nulls_first
            keys.append(OrderKey(self.rex(ordered.this, scope, hook), descending, nulls_last))
        return Over(BIGINT.with_nullable(False), name, (), partition, tuple(keys))

    # --- expanded SQL ----------------------------------------------------------------------

    def sql(self, node: exp.Expr, scope: Scope, parent: int = 0) -> str:
        """The validator's unparsing of ``node``: qualified, back-quoted names."""
        if isinstance(node, exp.Paren):
            return self.sql(node.this, scope, parent)
        if isinstance(node, exp.Column):
            _, f, alias = scope.resolve(node)
            return f"{quote(alias)}.{quote(f.name)}"
        if isinstance(node, exp.Literal):
            if node.is_string:
                return "'" + node.this.replace("'", "''") + "'"
            literal = _literal(node)
            return str(literal.value) if literal.type.name == "DOUBLE" else node.this
        if isinstance(node, exp.Boolean):
            return "TRUE" if node.this else "FALSE"
        if isinstance(node, exp.Null):
            return "NULL"
        if isinstance(node, exp.Interval):
            unit = node.unit.name.upper() if node.unit else "SECOND"
            return f"INTERVAL '{node.this.name}' {unit}"
        if isinstance(node, exp.Star):
            return "*"
        operator = None
        if type(node) in _ARITHMETIC:
            operator = _ARITHMETIC[type(node)]
        elif isinstance(node, exp.Mod):
            operator = "%"
        elif isinstance(node, exp.DPipe):
            operator = "||"
        elif type(node) in _COMPARISONS:
            operator = _COMPARISONS[type(node)]
        elif isinstance(node, exp.And):
            operator = "AND"
        elif isinstance(node, exp.Or):
            operator = "OR"
        if operator is not None:
            precedence = _PRECEDENCE[operator]
            left = self.sql(node.this, scope, precedence)
            right = self.sql(node.expression, scope, precedence + (operator in ("-", "/", "%")))
            text = f"{left} {operator} {right}"
            return f"({text})" if precedence < parent else text
        if isinstance(node, exp.Between):
            text = (
                f"{self.sql(node.this, scope, 5)} BETWEEN ASYMMETRIC {self.sql(node.args['low'], scope, 5)}"
                f" AND {self.sql(node.args['high'], scope, 5)}"
            )
            return f"({text})" if parent > 3 else text
        if isinstance(node, exp.Not) and isinstance(node.this, exp.Is):
            return f"{self.sql(node.this.this, scope, 5)} IS NOT NULL"
        if isinstance(node, exp.Is):
            return f"{self.sql(node.this, scope, 5)} IS NULL"
        if isinstance(node, exp.Not):
            return f"NOT {self.sql(node.this, scope, 3)}"
        if isinstance(node, exp.Neg):
            return f"-{self.sql(node.this, scope, 7)}"
        if isinstance(node, exp.Cast):
            # Flink's parser keeps STRING as written (its own type name spec unparses so).
            target = "STRING" if node.to.this == exp.DataType.Type.TEXT else sql_type(node.to).full(charset=False)
            return f"CAST({self.sql(node.this, scope)} AS {target})"
        if isinstance(node, exp.Case):
            # The validator writes a simple CASE as the comparisons it makes.
            subject = f"{self.sql(node.this, scope, 5)} = " if node.this is not None else ""
            branches = "".join(
                f" WHEN {subject}{self.sql(b.this, scope, 5 if subject else 0)} THEN {self.sql(b.args['true'], scope)}"
                for b in node.args.get("ifs") or []
            )
            default = node.args.get("default")
            otherwise = f" ELSE {self.sql(default, scope)}" if default is not None else ""
            return f"CASE{branches}{otherwise} END"
        if isinstance(node, exp.Trim):
            return f"TRIM(BOTH ' ' FROM {self.sql(node.this, scope)})"
        if isinstance(node, exp.Coalesce):
            # The validator's implicit casts of the operands to the common type show.
            result = self.rex(node, scope).type
            texts = []
            for operand in [node.this, *node.expressions]:
                text = self.sql(operand, scope)
                own = self.rex(operand, scope).type
                if own.with_nullable(True) != result.with_nullable(True) and not own.is_character:
                    text = f"CAST({text} AS {result.full(charset=False, not_null=False)})"
                texts.append(text)
            return f"COALESCE({', '.join(texts)})"
        if isinstance(node, exp.Window):
            inner = self.sql(node.this, scope)
            window = []
            if node.args.get("partition_by"):
                window.append("PARTITION BY " + ", ".join(self.sql(p, scope) for p in node.args["partition_by"]))
            order = node.args.get("order")
            if order is not None:
                window.append(
                    "ORDER BY "
                    + ", ".join(
                        self.sql(o.this, scope) + (" DESC" if o.args.get("desc") else "") for o in order.expressions
                    )
                )
            return f"{inner} OVER ({' '.join(window)})"
        if isinstance(node, exp.Filter):
            return f"{self.sql(node.this, scope)} FILTER (WHERE {self.sql(node.expression.this, scope)})"
        if isinstance(node, exp.RowNumber | exp.Rank | exp.DenseRank):
            return {exp.RowNumber: "ROW_NUMBER()", exp.Rank: "RANK()", exp.DenseRank: "DENSE_RANK()"}[type(node)]
        if isinstance(node, exp.AggFunc) and type(node) in _AGGREGATES:
            arg = node.this
            if isinstance(arg, exp.Distinct):
                return f"{_AGGREGATES[type(node)]}(DISTINCT {', '.join(self.sql(a, scope) for a in arg.expressions)})"
            return f"{_AGGREGATES[type(node)]}({'*' if isinstance(arg, exp.Star) else self.sql(arg, scope)})"
        if isinstance(node, exp.Func):
            name = _FUNCTION_NAMES.get(type(node)) or _fn_name(node)
            return f"{name}({', '.join(self.sql(a, scope) for a in _arguments(node))})"
        return node.sql()
