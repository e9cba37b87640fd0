"""PyFlink's Table API names over flowmagic's SQL planner (``from flowmagic.table import ...``)."""

from flowmagic.table.environment import StreamTableEnvironment, TableEnvironment
from flowmagic.table.environment_settings import EnvironmentSettings
from flowmagic.table.explain_detail import ExplainDetail
from flowmagic.table.schema import Schema
from flowmagic.table.table import Table
from flowmagic.table.table_config import TableConfig
from flowmagic.table.table_result import ResultKind, TableResult

__all__ = [
    "EnvironmentSettings",
    "ExplainDetail",
    "ResultKind",
    "Schema",
    "StreamTableEnvironment",
    "Table",
    "TableConfig",
    "TableEnvironment",
    "TableResult",
]
