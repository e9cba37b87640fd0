"""Running queries and INSERTs: one job per ``execute_sql`` (or ``Table.execute()``), one for
all the INSERTs of a ``StatementSet``, submitted through :mod:`flowmagic.executors` on the
executor ``flowmagic.executor`` names (``spark``, the default, or ``local``)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from flowmagic import executors
from flowmagic.runtime.continuous.job import ContinuousJob
from flowmagic.runtime.continuous.output import CollectedRecords
from flowmagic.sql import catalog as cat
from flowmagic.sql.errors import TableException
from flowmagic.table.table_result import TableResult
from flowmagic.vocabulary.option_values import option_bool, option_millis
from flowmagic.vocabulary.pipeline_config import ContinuousOptions

if TYPE_CHECKING:
    from flowmagic.table.environment import TableEnvironment

__all__ = ["EXECUTOR_OPTION", "StatementSet", "continuous_options", "run_statements"]

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
    executor = t_env.get_config().get(EXECUTOR_OPTION, "spark") or "spark"
    collected = None if inserts else CollectedRecords(plans[0].translation.sink.id)
    job = executors.submit(
        graph,
        executor=executor,
        continuous=continuous_options(t_env),
        on_output=None if collected is None else collected.take,
        echo=bool(inserts),
    )
    if collected is not None and isinstance(job, ContinuousJob):
        collected.attach(job)
    else:
        collected = None
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
        rows_as_they_come=collected,
        time_zone=t_env.get_config().get("table.local-time-zone", "default") or "default",
    )


def continuous_options(t_env: TableEnvironment) -> ContinuousOptions:
    """How an unbounded statement's job runs: its environment's checkpointing and restore
    settings, overridden by the table options of the same names (``SET 'k' = 'v'``)."""
    options = t_env.session.env.continuous_options()
    config = t_env.get_config().to_dict()
    if "execution.checkpointing.interval" in config:
        interval = option_millis(config, "execution.checkpointing.interval")
        options = replace(options, checkpoint_interval_ms=interval if interval > 0 else None)
    if "state.checkpoints.dir" in config or "execution.checkpointing.dir" in config:
        storage = config.get("execution.checkpointing.dir", config.get("state.checkpoints.dir"))
        options = replace(options, checkpoint_storage=storage)
    if "execution.checkpointing.savepoint-dir" in config or "state.savepoints.dir" in config:
        directory = config.get("execution.checkpointing.savepoint-dir", config.get("state.savepoints.dir"))
        options = replace(options, savepoint_directory=directory)
    if "execution.savepoint.path" in config:
        options = replace(options, savepoint_path=config["execution.savepoint.path"] or None)
    if "execution.savepoint.ignore-unclaimed-state" in config:
        ignore = option_bool(config, "execution.savepoint.ignore-unclaimed-state")
        options = replace(options, allow_non_restored_state=ignore)
    return options


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
