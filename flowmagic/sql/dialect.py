"""Flink's SQL dialect for sqlglot: DDL with computed columns, watermarks and ``WITH`` options,
window table functions (``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND))``),
``STRING`` and ``TIMESTAMP_LTZ``.

sqlglot's RisingWave dialect already reads ``WATERMARK FOR`` and computed columns (RisingWave took
them from Flink); this dialect adds what Flink has beyond it.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp
from sqlglot.dialects.risingwave import RisingWave
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from flowmagic.sql.errors import SqlParserException


class TableFunctionCall(exp.Expression):
    """``TABLE(F(args))`` in a FROM clause: a table-valued function such as TUMBLE."""

    arg_types = {"this": True, "expressions": True, "alias": False}


class TableArgument(exp.Expression):
    """``TABLE t [PARTITION BY cols]``: a table passed to a table-valued function."""

    arg_types = {"this": True, "partition_by": False}


class Descriptor(exp.Expression):
    """``DESCRIPTOR(col, ...)``: column names passed to a table-valued function."""

    arg_types = {"expressions": True}


class Flink(RisingWave):
    """Flink 2.3's SQL as its parser reads it (Calcite with Flink's extensions)."""

    # Calcite's default collation, as Flink keeps it: NULLS FIRST ascending, NULLS LAST descending.
    NULL_ORDERING = "nulls_are_small"

    class Tokenizer(RisingWave.Tokenizer):
        KEYWORDS = {
            **RisingWave.Tokenizer.KEYWORDS,
            "STRING": TokenType.TEXT,
            "TIMESTAMP_LTZ": TokenType.TIMESTAMPLTZ,
        }
        # Flink quotes identifiers with back-quotes, as Calcite's default does.
        IDENTIFIERS = ["`"]
        QUOTES = ["'"]

    # sqlglot's dialects declare Parser and Generator as class attributes, which mypy does not
    # take as base classes.
    class Parser(RisingWave.Parser):  # type: ignore[misc,valid-type]
        # A TIMESTAMP literal's precision is its fractional digits, as Calcite types it:
        # TIMESTAMP '2024-01-02 03:04:05.123' is a TIMESTAMP(3), not the CAST's default 6.
        TYPE_LITERAL_PARSERS = {
            **RisingWave.Parser.TYPE_LITERAL_PARSERS,
            exp.DType.TIMESTAMP: lambda self, this, _: self.expression(
                exp.Cast(this=this, to=exp.DataType.build(f"TIMESTAMP({_fraction_digits(this.name)})"))
            ),
        }

        def _parse_table(self, *args: Any, **kwargs: Any) -> exp.Expr | None:
            table = self._curr and self._curr.token_type == TokenType.TABLE
            if table and self._next and self._next.token_type == TokenType.L_PAREN:
                return self._parse_table_function()
            return super()._parse_table(*args, **kwargs)

        def _parse_table_function(self) -> exp.Expr:
            self._advance(2)
            name = self._parse_var(any_token=True)
            self._match_l_paren()
            arguments = self._parse_csv(self._parse_table_function_argument)
            self._match_r_paren()
            self._match_r_paren()
            call = TableFunctionCall(this=name, expressions=arguments)
            alias = self._parse_table_alias()
            if alias:
                call.set("alias", alias)
            return call

        def _parse_table_function_argument(self) -> exp.Expr | None:
            if self._match(TokenType.TABLE):
                table = self._parse_table_parts()
                partition = None
                if self._match(TokenType.PARTITION_BY):
                    if self._curr and self._curr.token_type == TokenType.L_PAREN:
                        partition = self._parse_wrapped_csv(self._parse_column)
                    else:
                        partition = [self._parse_column()]
                return TableArgument(this=table, partition_by=partition)
            if self._match_text_seq("DESCRIPTOR"):
                return Descriptor(expressions=self._parse_wrapped_csv(self._parse_column))
            return self._parse_expression()

    class Generator(RisingWave.Generator):  # type: ignore[misc,valid-type]
        TYPE_MAPPING = {**RisingWave.Generator.TYPE_MAPPING, exp.DType.TEXT: "STRING"}


def _fraction_digits(literal: str) -> int:
    seconds = literal.strip().rpartition(":")[2]
    return len(seconds.partition(".")[2])


def parse_statement(sql: str) -> exp.Expr:
    """One statement parsed; Flink's parser message (with line and column) when it does not parse."""
    try:
        statements = [s for s in Flink().parse(sql) if s is not None]
    except ParseError as error:
        detail = error.errors[0] if error.errors else {}
        line, column = detail.get("line", 1), detail.get("col", 1)
        near = detail.get("highlight") or ""
        raise SqlParserException(f'SQL parse failed. Encountered "{near}" at line {line}, column {column}.') from None
    except TokenError as error:
        raise SqlParserException(f"SQL parse failed. {error}") from None
    if len(statements) != 1:
        raise SqlParserException("Unsupported SQL query! executeSql() only accepts a single SQL statement.")
    return statements[0]
