"""A pipeline made from a Flink SQL script (``%%flow NAME --sql``): DDL statements and SET lines,
then one query or INSERT, planned as Flink 2.3 plans it and built into the graphs Flink would
submit for it (a SELECT with its collect sink).
"""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from flowmagic.api.environment import StreamExecutionEnvironment
from flowmagic.errors import FlowError, ProgramError
from flowmagic.graph.job_graph import JobGraph
from flowmagic.graph.physical_graph import PhysicalGraph
from flowmagic.pipeline import Pipeline, PlanText
from flowmagic.runtime import JobResult
from flowmagic.runtime.continuous.job import ContinuousJob
from flowmagic.runtime.continuous.output import EpochOutput
from flowmagic.sql.dialect import Flink, parse_statement
from flowmagic.sql.errors import TableException
from flowmagic.sql.exec_nodes import rendered_nodes
from flowmagic.sql.explain import explain_text
from flowmagic.sql.retraction import Retraction, explain_retraction
from flowmagic.sql.session import SqlSession, StatementPlan
from flowmagic.sql.translate import COLLECT_SINK_NAME
from flowmagic.table.tableau import batch_tableau, cell_text, streaming_tableau
from flowmagic.widgets.graph_view import FlowGraphs
from flowmagic.widgets.job_view import JobView
from flowmagic.widgets.sql_plans import PlanLink, SqlPlans, retraction_html
from flowmagic.widgets.sql_result import SqlResultView

__all__ = ["PlanLink", "SqlPipeline", "SqlScriptError", "Statement", "split_script"]

_SET = re.compile(r"^\s*SET\s+'([^']+)'\s*=\s*'([^']*)'\s*$", re.I | re.S)
_MODE = "execution.runtime-mode"
#: Flink's row kinds by their byte value, as SQL rows carry them (their last field).
ROW_KINDS = ("+I", "-U", "+U", "-D")


class SqlScriptError(FlowError):
    """A statement of a SQL script failed; the message names its line in the script."""


@dataclass(frozen=True)
class Statement:
    """One statement of a script and the script line it starts on (1-based)."""

    text: str
    line: int


def split_script(script: str) -> list[Statement]:
    """The statements of ``script``, each ending in ``;`` at a line end as in Flink's SQL client;
    ``--`` comment lines are left out."""
    statements: list[Statement] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(script.splitlines(), start=1):
        if not current and (not line.strip() or line.strip().startswith("--")):
            continue
        if line.strip().startswith("--"):
            continue
        if not current:
            start = number
        current.append(line)
        if line.rstrip().endswith(";"):
            statements.append(Statement("\n".join(current).rstrip()[:-1].strip(), start))
            current = []
    if current and "".join(current).strip():
        statements.append(Statement("\n".join(current).strip(), start))
    return statements


class SqlPipeline(Pipeline):
    """A pipeline whose program is a SQL statement: ``.explain()`` is Flink's EXPLAIN text,
    ``.stream_graph``, ``.job_graph`` and ``.execution_graph`` what Flink would submit."""

    def __init__(
        self,
        name: str,
        script: str,
        *,
        mode: str | None = None,
        parallelism: int | None = None,
        taskmanagers: int | None = None,
        slots_per_taskmanager: int | None = None,
    ):
        statements = split_script(script)
        if not statements:
            raise SqlScriptError("The SQL script holds no statement: end it with a query or an INSERT INTO.")
        configuration = {}
        for statement in statements:
            match = _SET.match(statement.text)
            if match:
                configuration[match.group(1)] = match.group(2)
        if mode is None:
            mode = configuration.get(_MODE, "streaming").lower()
        if mode not in ("streaming", "batch"):
            raise SqlScriptError(f"Unsupported {_MODE} '{mode}': use 'streaming' or 'batch'.")
        session = SqlSession(mode == "streaming", env=StreamExecutionEnvironment(parallelism=parallelism))
        for statement in statements[:-1]:
            _at_line(statement, session.execute)
        self.session = session
        self.statement = statements[-1].text
        self.plan: StatementPlan = _translated(statements[-1], session)
        planned = (self.plan.physical, self.plan.plan_root)
        self.explain_text = explain_text(session, self.plan.logical, (), planned)
        #: ``EXPLAIN CHANGELOG_MODE``: the physical plan with the kinds of rows each node emits.
        self.changelog_text = explain_text(session, self.plan.logical, ("CHANGELOG_MODE",), planned)
        #: Why the statement's result holds updates or deletes (or that it does not).
        self.retraction: Retraction = explain_retraction(self.plan.exec_root, streaming=session.streaming)
        super().__init__(name, session.env, taskmanagers=taskmanagers, slots_per_taskmanager=slots_per_taskmanager)
        self.links = self._links()

    def _links(self) -> list[PlanLink]:
        links = []
        vertex_of = _vertex_names(self.job_graph)
        for exec_id, transformations in sorted(self.plan.translation.by_exec_node.items()):
            operators = tuple(
                (t.id, self.stream_graph.nodes[t.id].name) for t in transformations if t.id in self.stream_graph.nodes
            )
            if not operators:
                continue
            description = next(
                (
                    self.stream_graph.nodes[t.id].operator_description
                    for t in transformations
                    if t.id in self.stream_graph.nodes
                ),
                "",
            )
            vertices = tuple(dict.fromkeys(vertex_of[node_id] for node_id, _ in operators))
            links.append(PlanLink(exec_id, description, operators, vertices))
        return links

    def plan_nodes(self, job_graph: JobGraph | None = None) -> dict[str, list[str]]:
        """The plan nodes each vertex of ``job_graph`` (default: the pipeline's) runs, by vertex
        id: Flink's description of each operator of its chain (``[3]:GroupAggregate(...)``)."""
        job_graph = job_graph or self.job_graph
        nodes = self.stream_graph.nodes
        return {
            vertex.id: [nodes[node_id].operator_description or nodes[node_id].name for node_id in vertex.chain]
            for vertex in job_graph.vertices.values()
        }

    def plan_lines(self) -> list[tuple[str, PlanLink | None]]:
        """The Optimized Execution Plan's lines, each with what its ExecNode became (None for an
        exchange, which becomes an edge)."""
        by_id = {link.exec_node_id: link for link in self.links}
        text = self.explain_text.split("== Optimized Execution Plan ==\n", 1)[1].rstrip("\n")
        nodes = rendered_nodes(self.plan.plan_root)
        return [(line, by_id.get(node.id)) for line, node in zip(text.splitlines(), nodes, strict=True)]

    def show(self, level: str = "all", *, physical_graph: PhysicalGraph | None = None) -> FlowGraphs:
        """The graph widget with the statement's plans in a first tab (see :meth:`Pipeline.show`)."""
        graphs = super().show(level, physical_graph=physical_graph)
        graphs.sql_plans = SqlPlans(self.name, self.explain_text, self.plan_lines(), self.retraction)
        return graphs

    def explain(self) -> PlanText:
        """Flink's ``EXPLAIN`` of the statement: Abstract Syntax Tree, Optimized Physical Plan and
        Optimized Execution Plan."""
        return PlanText(self.explain_text)

    def explain_changelog(self) -> PlanText:
        """Why the statement retracts (see :class:`~flowmagic.sql.retraction.Retraction`), then
        Flink's ``EXPLAIN CHANGELOG_MODE`` physical plan it is read from."""
        physical = self.changelog_text.split("== Optimized Physical Plan ==\n", 1)[1]
        physical = physical.split("\n\n== Optimized Execution Plan ==", 1)[0]
        text = f"{self.retraction}\n\n== Optimized Physical Plan (CHANGELOG_MODE) ==\n{physical}\n"
        if self.collects and "-U" in self.retraction.result_kinds:
            # Flink's EXPLAIN plans a query without its collect sink, which asks for -U when it runs.
            text += (
                "(EXPLAIN plans the query without its collect sink; running, the collect sink asks for each "
                "update's old row too (-U), as said above.)\n"
            )
        return PlanText(text)

    def run(self, spark: Any = None, *, mode: str | None = None, **options: Any) -> JobResult | ContinuousJob:
        """Run the statement (see :meth:`Pipeline.run`); a query's result shows live in the cell.
        Its runtime mode is the one it was planned in: a plan of the other mode is another plan."""
        planned = "streaming" if self.session.streaming else "batch"
        if mode is not None and mode != planned:
            raise ProgramError(
                f"Pipeline {self.name!r} was planned in {planned} mode, and Flink plans a statement for one mode: "
                f"define it with --mode {mode} (or SET '{_MODE}' = '{mode}') to run it in {mode} mode."
            )
        return super().run(spark, mode=mode, **options)

    def _job_view(self, job_graph: JobGraph, physical_graph: PhysicalGraph) -> JobView:
        """The live job view, each vertex with the plan nodes it runs."""
        return JobView(job_graph, physical_graph, plan_nodes=self.plan_nodes(job_graph))

    def _run_output(self) -> SqlRun | None:
        """A query's result, live as a table or changelog; nothing for an INSERT."""
        if not self.collects:
            return None
        return SqlRun(self)

    @property
    def collects(self) -> bool:
        """Whether the statement is a query whose rows a collect sink returns."""
        return any(node.name == f"Sink: {COLLECT_SINK_NAME}" for node in self.stream_graph.nodes.values())


class SqlRun:
    """One run of a query, shown in its cell: the rows its collect sink receives fed to the
    live :class:`~flowmagic.widgets.sql_result.SqlResultView`, epoch by epoch (an unbounded
    job) or once the job finished (a bounded one), and at the end the SQL client's text."""

    def __init__(self, pipeline: SqlPipeline):
        fields = pipeline.plan.logical.fields
        self.types = tuple(f.type.flink() for f in fields)
        self.streaming = pipeline.session.streaming
        self.sink_id = next(
            node.id for node in pipeline.stream_graph.nodes.values() if node.name == f"Sink: {COLLECT_SINK_NAME}"
        )
        # The table updates rows by the query's smallest unique key (a GROUP BY's keys).
        keys = sorted(sorted(fields) for fields in pipeline.plan.physical.unique_keys)
        key = min(keys, key=len) if keys else None
        self.names = [f.name for f in fields]
        why = pipeline.retraction
        self.view = SqlResultView(
            pipeline.name, self.names, key, text=self._texts, why=(why.summary(), retraction_html(why))
        )
        self._rows: queue.Queue[list[Any] | None] = queue.Queue()
        self._feeder = threading.Thread(target=self._feed, name=f"flowmagic-sql-result-{pipeline.name}", daemon=True)

    def _texts(self, values: Sequence[object]) -> list[str]:
        return [cell_text(value, type_text) for value, type_text in zip(values, self.types, strict=True)]

    def tableau(self) -> str:
        """The SQL client's text of the result: in streaming the changelog with each row's
        kind, in batch the rows. When the view kept only the newest changes, of those, said."""
        table = self.view.table
        if not self.streaming:
            return batch_tableau(self.names, self.types, table.rows())
        changes = [(change.kind, change.values) for change in table.changes]
        text = streaming_tableau(self.names, self.types, changes)
        if table.received > len(changes):
            text = f"The newest {len(changes):,} of {table.received:,} rows received:\n{text}"
        return text

    def display(self) -> None:
        self.view.display()
        self._feeder.start()

    def _feed(self) -> None:
        """Apply the rows handed over, off the job's thread: a continuous job hands each epoch's
        output on from its coordinator, whose next epoch waits until ``epoch`` returns."""
        add_all = self.view.add_all
        while True:
            rows = self._rows.get()
            if rows is None:
                return
            add_all((ROW_KINDS[row[-1]], row[:-1]) for row in rows)

    def epoch(self, output: EpochOutput) -> None:
        rows = output.collected.get(self.sink_id)
        if rows:
            self._rows.put(rows)

    def result(self, result: JobResult) -> None:
        self._rows.put(result.collected(self.sink_id))

    def ended(self, state: str) -> None:
        self._rows.put(None)
        if self._feeder.is_alive():
            self._feeder.join()
        self.view.finish(state, self.tableau())


def _vertex_names(job_graph: JobGraph) -> dict[int, str]:
    names = {}
    for vertex in job_graph.vertices.values():
        for node_id in vertex.chain:
            names[node_id] = vertex.name
    return names


def _translated(statement: Statement, session: SqlSession) -> StatementPlan:
    """The script's last statement planned; an INSERT whose sink cannot take the query's
    updates fails in Flink's words, with why the query retracts and the rewrites that avoid it
    as a note (Flink says only which node produced the updates)."""
    try:
        return _at_line(statement, session.translate)
    except TableException as error:
        query = _inserted_query(statement.text)
        if query is None or "doesn't support consuming" not in str(error):
            raise
        try:
            why: Retraction | None = explain_retraction(session.translate(query).exec_root, streaming=session.streaming)
        except FlowError:
            why = None
        if why is not None:
            error.add_note("\n".join(["Why does this query retract?", *why.lines(sink=False)]))
        raise


def _inserted_query(text: str) -> str | None:
    """The query of an ``INSERT INTO ... SELECT`` (None for any other statement)."""
    parsed = parse_statement(text)
    if not isinstance(parsed, exp.Insert) or parsed.expression is None:
        return None
    return str(parsed.expression.sql(dialect=Flink))


def _at_line(statement: Statement, action: Any) -> Any:
    try:
        return action(statement.text)
    except FlowError as error:
        located = type(error)(f"{error}\n(the statement at line {statement.line} of the script)")
        # Flink's reason stays the cause, and flowmagic's offer a note, as the planner raised them.
        for note in getattr(error, "__notes__", ()):
            located.add_note(note)
        raise located from error.__cause__
