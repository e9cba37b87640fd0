"""PyFlink's modules that flowmagic does not have: an error saying so, and what to use instead.

``import flowmagic.datastream.connectors.kafka`` (a PyFlink program's import with ``pyflink``
replaced) would otherwise fail with a bare ``ModuleNotFoundError``. :func:`install` appends a
finder to ``sys.meta_path``: last, so it is asked only about modules no other finder has, and
only about flowmagic's PyFlink-named packages; it raises
:class:`~flowmagic.errors.UnsupportedFeatureError` for them.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys

from flowmagic.errors import UnsupportedFeatureError

__all__ = ["install", "missing_module_error"]

#: PyFlink's packages flowmagic mirrors: a missing module under these is one of PyFlink's.
_MIRRORED = ("datastream", "common", "table")

_CONNECTOR = (
    "read it with Spark's connector and env.from_spark(spark.readStream...) (for Kafka: "
    "spark.readStream.format('kafka') with Spark's spark-sql-kafka package), and write with add_sink(function)"
)
_ADVICE = {
    "datastream.connectors": _CONNECTOR,
    "datastream.formats": (
        "read text (FileSource with StreamFormat.text_line_format(), or env.from_spark with Spark's csv, json or "
        "parquet reader) and parse records in map()"
    ),
    "table": (
        "flowmagic.table plans Flink SQL (TableEnvironment, StreamTableEnvironment, EnvironmentSettings, "
        "execute_sql, sql_query, explain_sql); write the query in SQL"
    ),
}


def missing_module_error(name: str) -> UnsupportedFeatureError:
    """The error for PyFlink's module ``name`` (``pyflink.X``, or flowmagic's ``flowmagic.X``),
    which flowmagic lacks."""
    relative = name.partition(".")[2]
    advice = next(
        (text for prefix, text in _ADVICE.items() if relative == prefix or relative.startswith(prefix + ".")),
        "flowmagic runs PyFlink's DataStream API (pyflink.datastream and its connectors, functions, state and "
        "window modules; pyflink.common) and Flink SQL through pyflink.table's TableEnvironment, not Java gateways",
    )
    return UnsupportedFeatureError(f"pyflink.{relative} has no flowmagic counterpart: {advice}.")


class _MissingModules(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _dot, rest = fullname.partition(".")
        if package == "flowmagic" and rest.split(".")[0] in _MIRRORED:
            raise missing_module_error(fullname)
        return None


def install() -> None:
    """Append the finder to ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _MissingModules) for finder in sys.meta_path):
        sys.meta_path.append(_MissingModules())
