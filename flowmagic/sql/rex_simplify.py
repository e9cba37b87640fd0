"""Calcite's RexSimplify as merging two Calcs applies it (RexProgramBuilder normalizes the merged
program): it folds what it can decide without evaluating functions.

- A call that is null whenever any operand is (Calcite's ``Strong`` policy ANY: arithmetic,
  comparisons, TRIM) with a NULL literal operand is a NULL literal of the call's type.
- A comparison of two numeric literals of one type is TRUE or FALSE (of two types, it is made
  again, NOT NULL); ``IS [NOT] NULL`` of a literal is TRUE or FALSE.
- ``x * 1``, ``x / 1``, ``x + 0``, ``x - 0`` are ``x`` (of the call's type).
- NOT, AND and OR of literals are decided.
- CASE drops the branches whose condition is FALSE and stops at the first TRUE one.
- A CAST of a literal: a DECIMAL that fits a DECIMAL (rescaled), an integer that fits an integer
  type, a string that fits a VARCHAR take the target type (NOT NULL, as the literal is); integers
  to DECIMAL, numbers to strings and truncated strings are evaluated (the executor), NOT NULL,
  inside a CAST when the target is nullable. A CAST that only
  makes its operand nullable is dropped. MOD, UPPER, CHAR_LENGTH... are not null-strict here.

Other calls stay as they are, constant or not: ``*(10, 1.5)``, ``+(1, 2)`` or ``UPPER('a')`` are left to
the ReduceExpressionsRule, which Flink runs before projections are pushed into a union's inputs,
so the constants that pushing creates stay unfolded. Each top-level expression keeps its type,
inside a CAST if simplifying changed it (``simplifyPreservingType``).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal, InvalidOperation

from flowmagic.sql.rex import Call, Literal, Rex
from flowmagic.sql.types import SqlType

#: Calls that are NULL when any operand is (Policy.ANY in Calcite's Strong; MOD, UPPER,
#: CHAR_LENGTH, SUBSTRING, CONCAT_WS are AS_IS there and stay).
_STRONG = {"+", "-", "*", "/", "=", "<>", "<", ">", "<=", ">=", "NOT", "LIKE", "TRIM", "CEIL", "FLOOR"}
_COMPARE = {
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
}
_INTEGER_BOUNDS = {"TINYINT": 2**7, "SMALLINT": 2**15, "INTEGER": 2**31, "BIGINT": 2**63}


def simplify_preserving_type(rex: Rex) -> Rex:
    """``rex`` simplified, cast back to its type if simplifying changed it."""
    simplified = simplify(rex)
    if simplified.type == rex.type or (isinstance(simplified, Literal) and _same_sans_nullability(simplified, rex)):
        return simplified
    return Call(rex.type, "CAST", (simplified,))


def _same_sans_nullability(a: Rex, b: Rex) -> bool:
    return a.type.with_nullable(True) == b.type.with_nullable(True) and (a.type.nullable or not b.type.nullable)


def simplify(rex: Rex) -> Rex:
    """``rex`` with what RexSimplify decides folded."""
    if not isinstance(rex, Call):
        return rex
    operands = tuple(simplify(o) for o in rex.operands)
    if rex.operator in _STRONG and any(_is_null(o) for o in operands):
        return Literal(rex.type.with_nullable(True), None)
    if rex.operator in _COMPARE and len(operands) == 2:
        decided = _compare(rex.operator, *operands)
        if decided is not None:
            return Literal(rex.type.with_nullable(False), decided)
        if all(isinstance(o, Literal) for o in operands):
            # Literals of different types are not compared; the call is made again, its
            # nullability derived from theirs.
            return Call(rex.type.with_nullable(any(o.type.nullable for o in operands)), rex.operator, operands)
    # The identities look at the operands as they were: a literal that simplifying an operand
    # made (``CAST(1):BIGINT``) does not count.
    kept = _arithmetic_identity(rex.operator, rex.operands)
    if kept is not None:
        return _typed(operands[kept], rex)
    if rex.operator in ("IS NULL", "IS NOT NULL") and isinstance(operands[0], Literal):
        return Literal(rex.type, (operands[0].value is None) == (rex.operator == "IS NULL"))
    logic = _logic(rex, operands)
    if logic is not None:
        return logic
    if rex.operator == "CASE":
        return _case(rex, operands)
    if rex.operator == "CAST" and len(operands) == 1:
        return _cast(rex, operands[0])
    return rex if operands == rex.operands else replace(rex, operands=operands)


def _is_null(rex: Rex) -> bool:
    return isinstance(rex, Literal) and rex.value is None and rex.type.name != "SYMBOL"


def _number(rex: Rex) -> Decimal | None:
    if not (isinstance(rex, Literal) and rex.type.is_numeric and rex.value is not None):
        return None
    try:
        return Decimal(str(rex.value))
    except InvalidOperation:
        return None


def _compare(operator: str, left: Rex, right: Rex) -> bool | None:
    """Two literals of one type name compared (DECIMALs of any precision, character strings);
    others are not decided."""
    if not (isinstance(left, Literal) and isinstance(right, Literal)) or left.type.name != right.type.name:
        return None
    if left.type.is_character and left.value is not None and right.value is not None:
        return bool(_COMPARE[operator](str(left.value), str(right.value)))
    a, b = _number(left), _number(right)
    if a is None or b is None:
        return None
    return bool(_COMPARE[operator](a, b))


def _logic(rex: Call, operands: tuple[Rex, ...]) -> Rex | None:
    """NOT, AND and OR of literals: decided where the literals decide them."""
    if rex.operator == "NOT" and isinstance(operands[0], Literal) and operands[0].value is not None:
        return Literal(rex.type, not operands[0].value)
    if rex.operator not in ("AND", "OR") or not all(isinstance(o, Literal) for o in operands):
        return None
    values = [o.value for o in operands]  # type: ignore[attr-defined]
    decisive = rex.operator == "OR"
    if decisive in values:
        return Literal(rex.type.with_nullable(False), decisive)
    if None in values:
        return Literal(rex.type.with_nullable(True), None)
    return Literal(rex.type.with_nullable(False), not decisive)


def _arithmetic_identity(operator: str, operands: tuple[Rex, ...]) -> int | None:
    """The operand ``x`` that ``x * 1``, ``1 * x``, ``x / 1``, ``x + 0``, ``0 + x`` or ``x - 0``
    is."""
    if len(operands) != 2:
        return None
    left, right = (_number(o) for o in operands)
    if operator == "*":
        return 1 if left == 1 else 0 if right == 1 else None
    if operator == "/":
        return 0 if right == 1 else None
    if operator == "+":
        return 1 if left == 0 else 0 if right == 0 else None
    if operator == "-":
        return 0 if right == 0 else None
    return None


def _case(rex: Call, operands: tuple[Rex, ...]) -> Rex:
    kept: list[Rex] = []
    for i in range(0, len(operands) - 1, 2):
        condition, value = operands[i], operands[i + 1]
        if isinstance(condition, Literal) and condition.value is not True:
            continue  # FALSE or UNKNOWN: this branch is never taken
        if isinstance(condition, Literal):
            return _typed(value, rex) if not kept else replace(rex, operands=(*kept, value))
        kept += [condition, value]
    otherwise = operands[-1]
    return _typed(otherwise, rex) if not kept else replace(rex, operands=(*kept, otherwise))


def _typed(value: Rex, case: Call) -> Rex:
    """The one value a CASE reduces to, of the CASE's type."""
    if value.type == case.type or _same_sans_nullability(value, case):
        return value
    return simplify(Call(case.type, "CAST", (value,)))


def _cast(rex: Call, operand: Rex) -> Rex:
    target = rex.type
    if operand.type == target.with_nullable(operand.type.nullable) and (target.nullable or not operand.type.nullable):
        # Only the nullability widens; a DECIMAL literal is made again, at its type's scale.
        if isinstance(operand, Literal) and operand.value is not None and target.name == "DECIMAL":
            return Literal(operand.type, _rescaled(operand.value, target))
        return operand
    if not isinstance(operand, Literal):
        return replace(rex, operands=(operand,))
    if operand.value is None:
        return Literal(target.with_nullable(True), None)
    if _value_kept(operand, target):
        # The cast removed from the literal (RexBuilder.canRemoveCastFromLiteral): the value as
        # it is, of the target type, NOT NULL as the literal is.
        value = _rescaled(operand.value, target) if target.name == "DECIMAL" else operand.value
        return Literal(target.with_nullable(False), value)
    value = _cast_value(operand, target)
    if value is None:
        return replace(rex, operands=(operand,))
    # Evaluated (the executor): a NOT NULL value, cast back to a nullable target.
    folded = Literal(target.with_nullable(False), value)
    return Call(target, "CAST", (folded,)) if target.nullable else folded


def _rescaled(value: object, target: SqlType) -> str:
    return str(Decimal(str(value)).quantize(Decimal(1).scaleb(-(target.scale or 0))))


def _value_kept(literal: Literal, target: SqlType) -> bool:
    if target.name == "DECIMAL" and literal.type.name == "DECIMAL":
        number = _number(literal)
        assert number is not None
        digits, exponent = len(number.as_tuple().digits), number.as_tuple().exponent
        integral = digits + min(int(exponent), 0)
        return integral <= (target.precision or 10) - (target.scale or 0)
    if target.name == "VARCHAR" and literal.type.is_character:
        return target.precision is None or len(str(literal.value)) <= target.precision
    if target.name in _INTEGER_BOUNDS and literal.type.name in _INTEGER_BOUNDS and isinstance(literal.value, int):
        bound = _INTEGER_BOUNDS[target.name]
        return -bound <= literal.value < bound
    return False


def _cast_value(literal: Literal, target: SqlType) -> object | None:
    number = _number(literal) if literal.type.name != "DOUBLE" else None
    if number is not None and target.name in _INTEGER_BOUNDS and number == number.to_integral_value():
        bound = _INTEGER_BOUNDS[target.name]
        return int(number) if -bound <= number < bound else None
    if number is not None and target.name == "DECIMAL" and literal.type.name in _INTEGER_BOUNDS:
        fits = len(str(abs(int(number)))) <= (target.precision or 10) - (target.scale or 0)
        return str(number) if fits else None
    if number is not None and target.name == "VARCHAR":
        return str(literal.value)
    if target.name == "VARCHAR" and literal.type.is_character:
        return str(literal.value)[: target.precision]
    return None
