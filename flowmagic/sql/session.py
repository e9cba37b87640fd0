"""A SQL session: the catalog, the table configuration and the ExecNode id counter, and the
statements Flink's ``TableEnvironment.executeSql`` carries out (DDL, SET, SHOW, DESCRIBE, EXPLAIN).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp

from flowmagic.sql import catalog as cat
from flowmagic.sql import physical as ph
from flowmagic.sql.dialect import Flink, parse_statement
from flowmagic.sql.errors import TableException, ValidationException
from flowmagic.sql.exec_nodes import ExecGraphBuilder, ExecNode
from flowmagic.sql.explain import explain_text
from flowmagic.sql.logical import Field, LogicalProject, LogicalTableScan, RelNode
from flowmagic.sql.multiple_input import fuse_multiple_inputs
from flowmagic.sql.optimize import optimize
from flowmagic.sql.to_rel import SqlToRel, sql_type
from flowmagic.sql.translate import Translation, Translator, translate
from flowmagic.vocabulary.configuration import Configuration

if TYPE_CHECKING:
    from flowmagic.api.environment import StreamExecutionEnvironment
    from flowmagic.graph.stream_graph import StreamGraph

EXPLAIN_DETAILS = ("ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN", "PLAN_ADVICE")
_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+((?:PLAN\s+FOR\s+)?)", re.I)
_DETAIL = re.compile(r"^\s*(" + "|".join(EXPLAIN_DETAILS) + r")\s*(,)?", re.I)
_SET = re.compile(r"^\s*SET\s+'([^']+)'\s*=\s*'([^']*)'\s*;?\s*$", re.I | re.S)
_RESET = re.compile(r"^\s*RESET(?:\s+'([^']+)')?\s*;?\s*$", re.I | re.S)
_SHOW_TABLES = re.compile(r"^\s*SHOW\s+(TABLES|VIEWS)\s*;?\s*$", re.I)
RUN_LATER = "Running SQL queries comes with flowmagic's SQL part 2; today flowmagic plans and explains them."


@dataclass
class StatementResult:
    """What a statement returns: a result kind (``SUCCESS`` or ``SUCCESS_WITH_CONTENT``) and its
    rows, as Flink's TableResult holds them."""

    kind: str
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[object, ...]] = field(default_factory=list)


@dataclass
class PlannedQuery:
    logical: RelNode
    job_name: str


@dataclass
class StatementPlan:
    """A statement's plans, from the logical plan to the transformations it became."""

    logical: RelNode
    physical: ph.PhysicalNode
    #: The sink ExecNode (the collect sink of a SELECT), the root of the ExecNode graph.
    exec_root: ExecNode
    #: The ExecNode the Optimized Execution Plan starts at (a SELECT's query, without its sink).
    plan_root: ExecNode
    translation: Translation
    job_name: str


class SqlSession:
    """One table environment's SQL state."""

    def __init__(
        self,
        streaming: bool,
        configuration: dict[str, str] | None = None,
        env: StreamExecutionEnvironment | None = None,
    ) -> None:
        self.streaming = streaming
        self.configuration: dict[str, str] = dict(configuration or {})
        self.catalog = cat.Catalog()
        self.exec_node_ids = 0
        self._env = env

    @property
    def env(self) -> StreamExecutionEnvironment:
        """The stream environment statements are translated into: its transformation id
        counter is the session's, which every translated statement advances as in Flink."""
        from flowmagic.api.environment import StreamExecutionEnvironment

        if self._env is None:
            self._env = StreamExecutionEnvironment()
        parallelism = self.configuration.get("parallelism.default")
        if parallelism is not None:
            self._env.set_parallelism(int(parallelism))
        if "pipeline.auto-watermark-interval" in self.configuration:
            # Flink's executor configures the environment with the table's configuration.
            configuration = Configuration()
            configuration.set_string(
                "pipeline.auto-watermark-interval", self.configuration["pipeline.auto-watermark-interval"]
            )
            self._env.configure(configuration)
        self._env.set_runtime_mode("streaming" if self.streaming else "batch")
        return self._env

    def register_data_stream(self, table: cat.CatalogDataStream) -> None:
        """Register a DataStream's table as a temporary view (Flink's ``createTemporaryView``
        of a stream; an anonymous one under its own name)."""
        self.catalog.create(table, temporary=True, if_not_exists=False)

    # --- statements ------------------------------------------------------------------------

    def execute(self, statement: str) -> StatementResult:
        """Carry out one statement as ``executeSql`` does."""
        statement = statement.strip().rstrip(";")
        match = _SET.match(statement)
        if match:
            self.configuration[match.group(1)] = match.group(2)
            return StatementResult("SUCCESS")
        match = _RESET.match(statement)
        if match:
            if match.group(1):
                self.configuration.pop(match.group(1), None)
            return StatementResult("SUCCESS")
        if _SHOW_TABLES.match(statement):
            return StatementResult("SUCCESS_WITH_CONTENT", ["table name"], [(n,) for n in self.catalog.names()])
        if _EXPLAIN.match(statement):
            query, details = self.split_explain(statement)
            return StatementResult("SUCCESS_WITH_CONTENT", ["result"], [(self.explain(query, details),)])
        node = parse_statement(statement)
        if isinstance(node, exp.Create):
            return self._create(node)
        if isinstance(node, exp.Drop):
            return self._drop(node)
        if isinstance(node, exp.Describe):
            return self._describe(node.this.name)
        if isinstance(node, exp.Select | exp.Union | exp.Insert):
            self.plan(statement)
            raise TableException("A query or INSERT runs a job: the table environment's execute_sql submits it.")
        raise ValidationException(f"Unsupported SQL statement: {statement.split()[0].upper()}")

    def runs_job(self, statement: str) -> bool:
        """Whether ``statement`` is a query or an INSERT (executing it submits a job)."""
        statement = statement.strip().rstrip(";")
        if any(p.match(statement) for p in (_SET, _RESET, _SHOW_TABLES, _EXPLAIN)):
            return False
        return isinstance(parse_statement(statement), exp.Select | exp.Union | exp.Insert | exp.Subquery)

    def split_explain(self, statement: str) -> tuple[str, tuple[str, ...]]:
        rest = _EXPLAIN.sub("", statement, count=1)
        details = []
        while True:
            match = _DETAIL.match(rest)
            if not match:
                break
            details.append(match.group(1).upper())
            rest = rest[match.end() :]
            if not match.group(2):
                break
        return rest.strip(), tuple(details)

    def _create(self, node: exp.Create) -> StatementResult:
        kind = (node.args.get("kind") or "").upper()
        properties = node.args.get("properties")
        props = list(properties.expressions) if properties is not None else []
        temporary = any(isinstance(p, exp.TemporaryProperty) for p in props)
        if_not_exists = bool(node.args.get("exists"))
        if kind == "VIEW":
            name = node.this.name if not isinstance(node.this, exp.Schema) else node.this.this.name
            query = node.expression
            logical = SqlToRel(self.catalog, self.streaming).query(query).rel
            self.catalog.create(cat.CatalogView(name, query, logical.names), temporary, if_not_exists)
            return StatementResult("SUCCESS")
        if kind != "TABLE":
            raise ValidationException(f"Unsupported CREATE {kind}")
        schema = node.this
        if not isinstance(schema, exp.Schema):
            raise ValidationException("CREATE TABLE ... AS SELECT is not supported yet")
        name = schema.this.name
        columns: list[cat.Column] = []
        watermark = None
        primary_key: tuple[str, ...] = ()
        for item in schema.expressions:
            if isinstance(item, exp.ColumnDef):
                computed = next(
                    (
                        c.args["kind"].this
                        for c in item.args.get("constraints") or []
                        if isinstance(c.args.get("kind"), exp.ComputedColumnConstraint)
                    ),
                    None,
                )
                not_null = any(
                    isinstance(c.args.get("kind"), exp.NotNullColumnConstraint | exp.PrimaryKeyColumnConstraint)
                    for c in item.args.get("constraints") or []
                )
                type_ = sql_type(item.args["kind"], nullable=not not_null) if item.args.get("kind") else None
                columns.append(cat.Column(item.name, type_, computed))
            elif isinstance(item, exp.WatermarkColumnConstraint):
                watermark = (item.this.name, item.expression)
            elif isinstance(item, exp.PrimaryKey):
                primary_key = tuple(i.name for i in item.expressions)
        options = {
            p.this.this if isinstance(p.this, exp.Literal) else p.name: p.args["value"].this
            for p in props
            if isinstance(p, exp.Property)
        }
        if primary_key:
            columns = [
                cat.Column(c.name, c.type.with_nullable(False), None) if c.name in primary_key and c.type else c
                for c in columns
            ]
        table = cat.CatalogTable(name, columns, options, watermark, primary_key)
        if watermark is not None and all(c.name != watermark[0] for c in columns):
            raise ValidationException(
                f"The rowtime attribute field '{watermark[0]}' is not defined in the table schema, "
                f"at line {1}, column {1}\nAvailable fields: [{', '.join(f'`{c.name}`' for c in columns)}]"
            )
        # Computed columns are typed by converting the table once (Flink resolves the schema at CREATE).
        probe = cat.Catalog()
        probe.create(table, False, False)
        rel = SqlToRel(probe, True).table(name, as_source=False)
        table.columns = [
            cat.Column(c.name, f.type if c.expression is not None else c.type, c.expression)
            for c, f in zip(columns, rel.fields, strict=True)
        ]
        self.catalog.create(table, temporary, if_not_exists)
        return StatementResult("SUCCESS")

    def _drop(self, node: exp.Drop) -> StatementResult:
        kind = (node.args.get("kind") or "").upper()
        for table in node.args.get("tables") or [node.this]:
            self.catalog.drop(
                table.name, kind == "VIEW", bool(node.args.get("exists")), bool(node.args.get("temporary"))
            )
        return StatementResult("SUCCESS")

    def _describe(self, name: str) -> StatementResult:
        obj = self.catalog.lookup(name)
        if obj is None:
            raise ValidationException(f"Tables or views with the identifier '{cat.qualified(name)}' doesn't exist.")
        rows: list[tuple[object, ...]] = []
        if isinstance(obj, cat.CatalogView):
            rel = SqlToRel(self.catalog, self.streaming).query(obj.query).rel
            rows = [(f.name, f.type.flink().removesuffix(" NOT NULL"), f.type.nullable, "", "", "") for f in rel.fields]
        else:
            rel = SqlToRel(self.catalog, True).table(name, as_source=False)
            for column, f in zip(obj.columns, rel.fields, strict=True):
                key = f"PRI({', '.join(obj.primary_key)})" if column.name in obj.primary_key else ""
                extras = f"AS {_flink_sql(column.expression)}" if column.expression is not None else ""
                wm = ""
                if obj.watermark is not None and obj.watermark[0] == column.name:
                    wm = _flink_sql(obj.watermark[1])
                rows.append((column.name, f.type.flink().removesuffix(" NOT NULL"), f.type.nullable, key, extras, wm))
        return StatementResult("SUCCESS_WITH_CONTENT", ["name", "type", "null", "key", "extras", "watermark"], rows)

    # --- queries ---------------------------------------------------------------------------

    def plan(self, statement: str, *, whole_table: bool = False) -> PlannedQuery:
        """Validate ``statement`` (a query or INSERT) and convert it to Calcite's logical plan;
        ``whole_table``: ``SELECT * FROM t`` stands for the Table API's table ``t`` itself,
        its scan (no projection)."""
        node = parse_statement(statement)
        converter = SqlToRel(self.catalog, self.streaming)
        if isinstance(node, exp.Insert):
            rel, name = converter.insert(node)
            return PlannedQuery(rel, name)
        if not isinstance(node, exp.Select | exp.Union | exp.Subquery):
            raise ValidationException(
                "Unsupported SQL query! explainSql() only accepts a single SQL query (SELECT or INSERT)."
            )
        converted = converter.query(node)
        rel = converted.rel
        if whole_table and isinstance(rel, LogicalProject) and isinstance(rel.inputs[0], LogicalTableScan):
            rel = rel.inputs[0]
        return PlannedQuery(rel, converted.sql)

    def result_schema(self, statement: str) -> list[tuple[str, str]]:
        """(name, Flink type) of each column ``statement`` returns."""
        return [(f.name, f.type.flink()) for f in self.plan(statement).logical.fields]

    def job_name(self, statement: str) -> str:
        """The name Flink gives the job of ``statement``: the expanded query, or ``insert-into_<table>``."""
        return self.plan(statement).job_name

    def exec_graph(self, physical: ph.PhysicalNode) -> ExecNode:
        """The ExecNode graph of a physical plan; its ids continue the session's counter, as
        every EXPLAIN and execution in a Flink session advances it."""
        builder = ExecGraphBuilder(self.exec_node_ids, self.streaming)
        root = builder.build(physical)
        builder.break_deadlocks(root)
        builder.finish()
        self.exec_node_ids = builder.next_id
        return root

    def compile(self, statement: str) -> ExecNode:
        """The ExecNode graph of ``statement`` (an INSERT, or a query without its collect sink)."""
        return self.exec_graph(optimize(self.plan(statement).logical, self.streaming, self.configuration))

    def translate(
        self, statement: str, *, collect: bool = True, to_stream: bool = False, whole_table: bool = False
    ) -> StatementPlan:
        """Plan ``statement`` (a query or INSERT) and add its transformations to :attr:`env`, as
        executing it in Flink does: a SELECT ends in its collect sink (unless not ``collect``:
        EXPLAIN's physical execution plan; or ``to_stream``: the sink of a DataStream the
        query's rows become, which enforces NOT NULL columns and leaves the rest to the
        bridge). ExecNode and transformation ids continue the session's counters."""
        planned = self.plan(statement, whole_table=whole_table)
        physical = optimize(planned.logical, self.streaming, self.configuration, collected=collect or to_stream)
        builder = ExecGraphBuilder(self.exec_node_ids, self.streaming)
        root = builder.build(physical)
        sink: ExecNode | None
        if to_stream:
            builder.next_id += 1
            sink_fields = list(planned.logical.fields)
            sink = ExecNode(
                id=builder.next_id,
                type="stream-exec-sink_2" if self.streaming else "batch-exec-sink_2",
                name="Sink",
                description="",
                fields=sink_fields,
                inputs=[root],
            )
            query, collect = root, False
        elif not collect and not isinstance(physical, ph.Sink):
            sink, query, sink_fields = None, root, []
        elif isinstance(physical, ph.Sink):
            sink, query, collect = root, root.inputs[0], False
            table = self.catalog.lookup(physical.table.split(".")[-1].strip("`"))
            sink_fields = [
                Field(c.name, c.type)
                for c in (table.physical if isinstance(table, cat.CatalogTable) else [])
                if c.type is not None
            ]
        else:
            # A query's rows go to Flink's collect sink, the ExecNode after the query's.
            builder.next_id += 1
            sink_fields = list(planned.logical.fields)
            sink = ExecNode(
                id=builder.next_id,
                type=("stream" if self.streaming else "batch") + "-exec-sink_2",
                name="Sink",
                description=f"Sink(table=[*anonymous_collect${builder.next_id}*], "
                f"fields=[{', '.join(f.name for f in sink_fields)}])",
                fields=sink_fields,
                inputs=[root],
            )
            query = root
        uids = self.configuration.get("table.exec.uid.generation", "PLAN_ONLY").upper() == "ALWAYS"
        translator = Translator(self.env, self.catalog, self.streaming, uids, self.configuration)
        builder.break_deadlocks(sink or root)
        if not self.streaming:
            # Flink's batch planner fuses operators into MultipleInputs once the sink is made,
            # before the exchanges it adds are numbered.
            fused, builder.next_id = fuse_multiple_inputs(query, translator.chainable_source, builder.next_id)
            if fused is not query:
                if sink is not None:
                    sink.inputs = [fused if i is query else i for i in sink.inputs]
                if root is query:
                    root = fused
                query = fused
        builder.finish()
        self.exec_node_ids = builder.next_id
        if to_stream:
            assert sink is not None
            translation = Translation(translator.not_null_enforcer(sink, query, sink_fields), translator.by_exec_node)
        else:
            translation = translate(translator, query, sink, sink_fields, collect=not isinstance(physical, ph.Sink))
        return StatementPlan(planned.logical, physical, sink or root, root, translation, planned.job_name)

    def stream_graph(self, plan: StatementPlan, job_name: str | None = None) -> StreamGraph:
        """The StreamGraph of a translated statement (its own transformations only)."""
        return self.env.stream_graph_of([plan.translation.sink], job_name or plan.job_name)

    def explain(self, statement: str, details: tuple[str, ...] = (), *, whole_table: bool = False) -> str:
        """``EXPLAIN [details] statement`` as Flink 2.3 prints it (``whole_table``: see :meth:`plan`)."""
        # Flink translates the statement into transformations and their StreamGraph for every
        # EXPLAIN, so each one advances both id counters (the plain EXPLAIN included).
        plan = self.translate(statement, collect=False, whole_table=whole_table)
        text = explain_text(self, plan.logical, details, (plan.physical, plan.plan_root))
        stream_graph = self.stream_graph(plan)
        if "JSON_EXECUTION_PLAN" in details:
            return f"{text}\n== Physical Execution Plan ==\n{stream_graph.to_json_plan()}"
        return text


def _flink_sql(expression: exp.Expr) -> str:
    """An expression as Flink prints it back (DESCRIBE's extras): back-quoted names."""
    return expression.sql(dialect=Flink, identify=True)
