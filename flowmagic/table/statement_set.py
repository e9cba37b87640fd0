"""Running queries and INSERTs: one job per ``execute_sql`` (or ``Table.execute()``), one for
all the INSERTs of a ``StatementSet``, submitted through :mod:`flowmagic.executors` on the
executor ``flowmagic.executor`` names (``spark``, the default, or ``local``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowmagic import executors
from flowmagic.sql import catalog as cat
from flowmagic.sql.errors import TableException
from flowmagic.table.table_result import TableResult

if TYPE_CHECKING:
    from flowmagic.table.environment import TableEnvironment

__all__ = ["EXECUTOR_OPTION", "StatementSet", "run_statements"]

#: The table option naming the executor SQL jobs run on.
EXECUTOR_OPTION = "flowmagic.executor"


def run_statements(t_env: TableEnvironment, statements: list[str]) -> TableResult:
    """Submit one job for ``statements`` (one query, or INSERTs) and return its result."""
    session = t_env.session
    plans = [session.translate(s) for s in statements]
    inserts = [p for p in plans if p.job_name.startswith("insert-into_")]
    if len(plans) > 1 and len(inserts) != len(plans):
        raise TableException("A statement set holds INSERT statements only.")
    if inserts:
        job_name = "insert-into_" + ",".join(p.job_name.removeprefix("insert-into_") for p in inserts)
    else:
        job_name = plans[0].job_name
    graph = session.env.stream_graph_of([p.translation.sink for p in plans], job_name)
    if executors.is_unbounded(graph):
        raise TableException(
            "The statement reads an unbounded source (a 'datagen' table without 'number-of-rows', or a monitored "
            "directory); flowmagic's SQL runtime runs bounded jobs only, for now."
        )
    executor = t_env.get_config().get(EXECUTOR_OPTION, "spark") or "spark"
    job = executors.submit(graph, executor=executor)
    if inserts:
        names = [cat.qualified(p.job_name.split(".")[-1]) for p in inserts]
        return TableResult(
            "SUCCESS_WITH_CONTENT", names, [tuple(-1 for _ in names)], types=["BIGINT"] * len(names), job=job
        )
    fields = plans[0].logical.fields
    return TableResult(
        "SUCCESS_WITH_CONTENT",
        [f.name for f in fields],
        [],
        types=[f.type.flink() for f in fields],
        job=job,
        sink_id=plans[0].translation.sink.id,
        streaming=session.streaming,
        time_zone=t_env.get_config().get("table.local-time-zone", "default") or "default",
    )


class StatementSet:
    """PyFlink's ``StatementSet``: INSERTs added, then run as one job."""

    def __init__(self, t_env: TableEnvironment) -> None:
        self._t_env = t_env
        self._statements: list[str] = []

    def add_insert_sql(self, statement: str) -> StatementSet:
        """Add an ``INSERT INTO ...`` (validated now, as Flink validates it)."""
        self._t_env.session.plan(statement)
        if not statement.strip().upper().startswith("INSERT"):
            raise TableException("Only INSERT statements can be added to a StatementSet.")
        self._statements.append(statement)
        return self

    def execute(self) -> TableResult:
        """Run every INSERT added as one job."""
        if not self._statements:
            raise TableException("No statement to execute: add INSERT statements first.")
        statements, self._statements = self._statements, []
        return run_statements(self._t_env, statements)
