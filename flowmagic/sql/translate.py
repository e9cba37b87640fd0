"""ExecNodes -> transformations: what Flink's ``ExecNode.translateToPlan`` builds, through the
program builder's public protocol (``new_id``, ``add_operator``), so that the DataStream
compile passes build the StreamGraph, JobGraph and ExecutionGraph of a SQL statement unchanged.

Each ExecNode becomes one transformation, numbered from the environment's counter as Flink
numbers them (an exchange is a partitioning that takes an id but makes no node); a sink
becomes a ``ConstraintEnforcer`` when the sink's schema has NOT NULL columns, then the sink.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import ChainingStrategy, OperatorKind, OperatorSpec
from flowmagic.graph.partitioners import BROADCAST, FORWARD, GLOBAL, HASH, Partitioner
from flowmagic.graph.sql_runtime import SinkSpec
from flowmagic.graph.transformations import (
    PARALLELISM_DEFAULT,
    LegacySinkTransformation,
    MultipleInputTransformation,
    OneInputTransformation,
    PartitionTransformation,
    SinkTransformation,
    SourceTransformation,
    Transformation,
    TwoInputTransformation,
    UnionTransformation,
)
from flowmagic.runtime.sql.keys import RowKey
from flowmagic.sql import catalog as cat
from flowmagic.sql import physical as ph
from flowmagic.sql.codegen import runtime_type
from flowmagic.sql.exec_nodes import ExecNode
from flowmagic.sql.logical import Field
from flowmagic.sql.multiple_input import MultipleInputExecNode
from flowmagic.sql.runtime_spec import runtime_spec
from flowmagic.sql.runtime_spec_ops import operator_runtime_spec

if TYPE_CHECKING:
    from flowmagic.api.environment import StreamExecutionEnvironment

__all__ = ["COLLECT_SINK_NAME", "RowKey", "Translation", "Translator", "translate"]

COLLECT_SINK_NAME = "Collect table sink"

#: The operator kind of each ExecNode type (without ``stream-exec-``/``batch-exec-`` and version).
_KINDS: dict[str, OperatorKind] = {
    "table-source-scan": OperatorKind.SQL_TABLE_SOURCE_SCAN,
    "values": OperatorKind.SQL_VALUES,
    "calc": OperatorKind.SQL_CALC,
    "drop-update-before": OperatorKind.SQL_DROP_UPDATE_BEFORE,
    "expand": OperatorKind.SQL_EXPAND,
    "watermark-assigner": OperatorKind.SQL_WATERMARK_ASSIGNER,
    "group-aggregate": OperatorKind.SQL_GROUP_AGGREGATE,
    "local-window-aggregate": OperatorKind.SQL_LOCAL_WINDOW_AGGREGATE,
    "global-window-aggregate": OperatorKind.SQL_GLOBAL_WINDOW_AGGREGATE,
    "window-aggregate": OperatorKind.SQL_WINDOW_AGGREGATE,
    "window-table-function": OperatorKind.SQL_WINDOW_TABLE_FUNCTION,
    "join": OperatorKind.SQL_JOIN,
    "interval-join": OperatorKind.SQL_INTERVAL_JOIN,
    "nested-loop-join": OperatorKind.SQL_NESTED_LOOP_JOIN,
    "hash-join": OperatorKind.SQL_HASH_JOIN,
    "adaptive-join": OperatorKind.SQL_ADAPTIVE_JOIN,
    "rank": OperatorKind.SQL_RANK,
    "deduplicate": OperatorKind.SQL_DEDUPLICATE,
    "over-aggregate": OperatorKind.SQL_OVER_AGGREGATE,
    "sort-limit": OperatorKind.SQL_SORT_LIMIT,
    "sort": OperatorKind.SQL_SORT,
    "hash-aggregate": OperatorKind.SQL_HASH_AGGREGATE,
    "sort-aggregate": OperatorKind.SQL_SORT_AGGREGATE,
}

#: Streaming operators that keep keyed state (Flink translates them with a key selector).
_KEYED = {
    "group-aggregate",
    "global-window-aggregate",
    "window-aggregate",
    "join",
    "interval-join",
    "rank",
    "deduplicate",
    "sort-limit",
}

#: Flink's transformation meta names where they differ from the ExecNode type (the uids of
#: ``table.exec.uid.generation=ALWAYS`` are ``<ExecNode id>_<meta name>``).
_META_NAMES = {"table-source-scan": "source"}


#: Connectors whose table sink is a Sink V2 (Flink's SinkV2Provider); the others' are
#: SinkFunctions (``print``).
_SINK_V2_CONNECTORS = frozenset({"blackhole"})


@dataclass(frozen=True)
class TableSinkV2:
    """The Sink V2 of a table's connector (a writer, no committer), as its graphs need it."""

    table: str
    connector: str
    has_committer: bool = False


@dataclass
class Translation:
    """The transformations of one statement: the last one (its sink's, or its query's when it has
    no sink), and which transformations each ExecNode became (for the plan view's links)."""

    sink: Transformation
    by_exec_node: dict[int, list[Transformation]]


def _operator_name(short: str) -> str:
    """Flink's simplified operator name: the ExecNode class's (``SortAggregate`` for the local
    and the global phase alike)."""
    return "".join(word.capitalize() for word in short.split("-"))


def _short_type(exec_type: str) -> str:
    return exec_type.split("-exec-", 1)[1].rsplit("_", 1)[0]


class Translator:
    """Translates ExecNodes into transformations of ``env``, each one once."""

    def __init__(
        self,
        env: StreamExecutionEnvironment,
        catalog: cat.Catalog,
        streaming: bool,
        uids: bool,
        configuration: dict[str, str] | None = None,
    ) -> None:
        self.env = env
        self.configuration = configuration or {}
        self.catalog = catalog
        self.streaming = streaming
        self.uids = uids
        self.done: dict[int, Transformation] = {}
        self.by_exec_node: dict[int, list[Transformation]] = {}

    def _record(self, node: ExecNode, t: Transformation) -> Transformation:
        self.by_exec_node.setdefault(node.id, []).append(t)
        return t

    def _uid(self, exec_id: int, meta: str) -> str | None:
        return f"{exec_id}_{meta}" if self.uids else None

    def _spec(
        self,
        kind: OperatorKind,
        node: ExecNode,
        keys: tuple[tuple[int, ...], ...] = (),
        *,
        discarding: bool = False,
        runtime: Any = None,
    ) -> OperatorSpec:
        if runtime is None:
            runtime = self._runtime_spec(kind, node)
        if discarding and isinstance(runtime, SinkSpec):
            # The end of a streaming file sink: its writer before it wrote the rows.
            runtime = replace(runtime, connector="discarding")
        params = SqlOperatorParams(
            exec_node_id=node.id,
            exec_type=node.type,
            description=node.description,
            field_names=tuple(f.name for f in node.fields),
            physical=node.physical,
            keys=keys,
            runtime=runtime,
        )
        return OperatorSpec(kind, params)

    def _runtime_spec(self, kind: OperatorKind, node: ExecNode) -> Any:
        return runtime_spec(kind, node, self.catalog, self.streaming, self.configuration)

    def translate(self, node: ExecNode) -> Transformation:
        # Inputs first, as Flink's translateToPlan recurses; a reused sub-plan translates once.
        stack: list[tuple[ExecNode, bool]] = [(node, False)]
        while stack:
            current, ready = stack.pop()
            if current.id in self.done:
                continue
            if not ready:
                stack.append((current, True))
                stack.extend((child, False) for child in reversed(current.inputs))
                continue
            self.done[current.id] = self._record(current, self._one(current))
        return self.done[node.id]

    def chainable_source(self, scan: ExecNode) -> bool:
        """Translate ``scan`` now, as Flink's MultipleInputNodeCreationProcessor does to ask
        whether it is a FLIP-27 source (its transformation then keeps that early id)."""
        source = self.translate(scan)
        return isinstance(source, SourceTransformation) and not source.legacy

    def _one(self, node: ExecNode) -> Transformation:
        short = _short_type(node.type)
        inputs = [self.done[child.id] for child in node.inputs]
        if short == "exchange":
            return self._exchange(node, inputs[0])
        if isinstance(node, MultipleInputExecNode):
            return self._multiple_input(node, inputs)
        if short == "union":
            # Flink's UnionTransformation takes its first input's parallelism, which a consumer
            # that inherits its input's (a Calc, the sink's ConstraintEnforcer) then runs at.
            return UnionTransformation(
                id=self.env.new_id(), name=f"Union[{node.id}]", parallelism=inputs[0].parallelism, inputs=inputs
            )
        if short in ("table-source-scan", "values"):
            return self._source(node, short)
        kind = _KINDS.get(short)
        if kind is None:
            raise NotImplementedError(f"flowmagic cannot build the graphs of Flink's {node.type} ExecNode yet")
        keys = tuple(p.keys for p in node.input_properties)
        keyed = self.streaming and short in _KEYED
        # A join reading one side broadcast runs at the other side's parallelism.
        probe = next((t for t in inputs if not _broadcast(t)), inputs[0])
        common: dict[str, Any] = {
            "id": self.env.new_id(),
            "name": f"{_operator_name(short)}[{node.id}]",
            "parallelism": probe.parallelism,
            "inputs": inputs,
            "description": f"[{node.id}]:{node.description}",
            "uid": self._uid(node.id, _META_NAMES.get(short, short)),
            "operator": self._spec(kind, node, keys),
            # An operator reading a singleton exchange runs as one subtask, for good.
            "max_parallelism": 1
            if any(i.max_parallelism == 1 and isinstance(i, PartitionTransformation) for i in inputs)
            else -1,
        }
        if len(inputs) == 2:
            t: Transformation = TwoInputTransformation(
                **common,
                state_key1=_row_key(node.inputs[0]) if keyed else None,
                state_key2=_row_key(node.inputs[1]) if keyed else None,
            )
        else:
            t = OneInputTransformation(**common, state_key=_row_key(node.inputs[0]) if keyed else None)
        self.env.add_operator(t)
        return t

    def _multiple_input(self, node: MultipleInputExecNode, inputs: list[Transformation]) -> Transformation:
        # Flink translates each member into a transformation the multiple input operator wraps:
        # they take ids but are no nodes of the graph.
        for _ in node.members:
            self.env.new_id()
        ordered = _generator_order(node, inputs)
        by_transformation = {id(t): child for child, t in zip(node.inputs, inputs, strict=True)}
        runtime = operator_runtime_spec(
            OperatorKind.SQL_MULTIPLE_INPUT,
            node,
            inputs_in_order=[by_transformation[id(t)] for t in ordered],
            kind_of=lambda member: _KINDS[_short_type(member.type)],
            spec_of=self._runtime_spec,
        )
        t = MultipleInputTransformation(
            id=self.env.new_id(),
            name=f"MultipleInput[{node.id}]",
            # The largest of the members', which run at their inputs' parallelism.
            parallelism=max(i.parallelism for i in inputs),
            inputs=ordered,
            description=f"[{node.id}]:{node.description}",
            uid=self._uid(node.id, "multiple-input"),
            operator=self._spec(OperatorKind.SQL_MULTIPLE_INPUT, node, runtime=runtime),
            chaining_strategy=ChainingStrategy.HEAD_WITH_SOURCES,
        )
        self.env.add_operator(t)
        for member in node.members:
            self.by_exec_node.setdefault(member.id, []).append(t)
        return t

    def _exchange(self, node: ExecNode, input_t: Transformation) -> Transformation:
        prop = node.input_properties[0] if node.input_properties else None
        distribution = prop.distribution if prop is not None else "FORWARD"
        names = [f.name for f in node.fields]
        parallelism, max_parallelism, mode = PARALLELISM_DEFAULT, -1, None if self.streaming else "BATCH"
        hashed = None
        key = _row_key(node) if distribution in ("HASH", "KEEP_INPUT_AS_IS") else None
        if distribution == "HASH":
            kind = HASH if self.streaming else f"HASH[{', '.join(names[k] for k in prop.keys)}]"  # type: ignore[union-attr]
        elif distribution == "SINGLETON":
            kind, parallelism, max_parallelism = GLOBAL, 1, 1
        elif distribution == "BROADCAST":
            kind = BROADCAST
        elif distribution == "KEEP_INPUT_AS_IS":
            # Flink's non-strict keep_input_as_is (a ForwardForConsecutiveHashPartitioner) keeps
            # the batch exchange mode; only the strict one (a plain forward) is UNDEFINED.
            kind, parallelism = FORWARD, input_t.parallelism
            hashed = Partitioner(f"HASH[{', '.join(names[k] for k in prop.keys)}]", key_selector=key)  # type: ignore[union-attr]
        else:
            kind, parallelism, mode = FORWARD, input_t.parallelism, None
        if node.blocking:
            mode = "BATCH"
        return PartitionTransformation(
            id=self.env.new_id(),
            name="Partition",
            parallelism=parallelism,
            max_parallelism=max_parallelism,
            inputs=[input_t],
            partitioner=Partitioner(kind, key_selector=key if kind != FORWARD else None, consecutive_hash=hashed),
            exchange_mode=mode,
        )

    def _source(self, node: ExecNode, short: str) -> Transformation:
        physical = node.physical
        if isinstance(physical, ph.TableSourceScan):
            stream = self.catalog.lookup(physical.path[-1])
            if isinstance(stream, cat.CatalogDataStream):
                return self._data_stream_scan(node, stream)
        if isinstance(physical, ph.TableSourceScan):
            table = self.catalog.lookup(physical.path[-1])
            options = table.options if isinstance(table, cat.CatalogTable) else {}
            legacy = options.get("connector") != "filesystem"
            name = f"{physical.path[-1]}[{node.id}]"
            parallelism, configured = PARALLELISM_DEFAULT, False
            # A datagen table ends with its number of rows or its first sequence field.
            sequences = any(
                k.startswith("fields.") and k.endswith(".kind") and v == "sequence" for k, v in options.items()
            )
            # A filesystem table ends with its files, unless it monitors its path for new ones.
            monitored = "source.monitor-interval" in options
            bounded = (options.get("connector") == "filesystem" and not monitored) or "number-of-rows" in options
            bounded = bounded or sequences
            max_parallelism = -1
        else:
            legacy, name, parallelism, configured, bounded = True, f"Values[{node.id}]", 1, True, True
            max_parallelism = 1
        t = SourceTransformation(
            id=self.env.new_id(),
            name=name,
            parallelism=parallelism,
            parallelism_configured=configured,
            max_parallelism=max_parallelism,
            description=f"[{node.id}]:{node.description}",
            uid=self._uid(node.id, _META_NAMES.get(short, short)),
            operator=self._spec(_KINDS[short], node),
            chaining_strategy=ChainingStrategy.HEAD if legacy else ChainingStrategy.ALWAYS,
            bounded=bounded,
            legacy=legacy,
        )
        self.env.add_operator(t)
        return t

    def _data_stream_scan(self, node: ExecNode, stream: cat.CatalogDataStream) -> Transformation:
        """Flink's ExternalDynamicSource: an input conversion (``DataStreamToTable``) reading
        the stream's own transformation, at its parallelism, so that the stream and the query
        are one job (the conversion chains to the stream's last operator)."""
        upstream: Transformation = stream.transformation
        rowtime, watermark = str(stream.rowtime is not None).lower(), str(stream.source_watermark).lower()
        description = (
            f"DataStreamToTable(stream={stream.identifier}, type={stream.data_type()}, "
            f"rowtime={rowtime}, watermark={watermark})"
        )
        t = OneInputTransformation(
            id=self.env.new_id(),
            name="DataStreamToTable",
            parallelism=upstream.parallelism,
            parallelism_configured=upstream.parallelism_configured,
            inputs=[upstream],
            description=description,
            uid=self._uid(node.id, "external-datastream"),
            operator=self._spec(OperatorKind.SQL_INPUT_CONVERSION, node),
        )
        self.env.add_operator(t)
        return t

    def not_null_enforcer(self, node: ExecNode, query: ExecNode, fields: list[Field]) -> Transformation:
        """``query``'s transformation, then the sink ``node``'s ConstraintEnforcer when the
        sink's schema (``fields``) has NOT NULL columns."""
        input_t = self.translate(query)
        not_null = [f.name for f in fields if not f.type.nullable]
        if not_null:
            description = f"ConstraintEnforcer[NotNullEnforcer(fields=[{', '.join(not_null)}])]"
            enforcer = OneInputTransformation(
                id=self.env.new_id(),
                name=f"ConstraintEnforcer[{node.id}]",
                parallelism=input_t.parallelism,
                inputs=[input_t],
                description=f"[{node.id}]:{description}",
                uid=self._uid(node.id, "constraint-validator"),
                operator=self._spec(OperatorKind.SQL_CONSTRAINT_ENFORCER, node),
            )
            self.env.add_operator(enforcer)
            input_t = self._record(node, enforcer)
        return input_t

    def sink(self, node: ExecNode, query: ExecNode, fields: list[Field], collect: bool) -> Transformation:
        """The sink ExecNode ``node`` over ``query``: a ConstraintEnforcer for NOT NULL columns,
        then the collect sink (a SELECT) or the table's sink."""
        input_t = self.not_null_enforcer(node, query, fields)
        sink_id = self.env.new_id()
        if collect:
            sink = LegacySinkTransformation(
                id=sink_id,
                name=COLLECT_SINK_NAME,
                parallelism=1,
                parallelism_configured=True,
                inputs=[input_t],
                uid=self._uid(node.id, "collect") if self.uids else f"tableCollectSink_{sink_id}",
                operator=self._spec(OperatorKind.SQL_COLLECT_SINK, node),
            )
        else:
            physical = node.physical
            table = physical.table.rsplit(".", 1)[-1] if isinstance(physical, ph.Sink) else "sink"
            table = table.strip("`").split(", ")[-1].rstrip("]")
            connector = physical.connector if isinstance(physical, ph.Sink) else ""
            if connector == "filesystem":
                return self._filesystem_sink(node, input_t, sink_id, table)
            if connector in _SINK_V2_CONNECTORS:
                # A Sink V2 (SinkV2Provider): expanded into its writer when the graph is generated.
                sink_v2 = SinkTransformation(
                    id=sink_id,
                    name=f"{table}[{node.id}]",
                    parallelism=input_t.parallelism,
                    inputs=[input_t],
                    uid=self._uid(node.id, "sink"),
                    operator=self._spec(OperatorKind.SQL_SINK, node),
                    sink=TableSinkV2(table, connector),
                )
                self.env.add_operator(sink_v2)
                self._record(node, sink_v2)
                return sink_v2
            sink = LegacySinkTransformation(
                id=sink_id,
                name=f"{table}[{node.id}]",
                parallelism=input_t.parallelism,
                inputs=[input_t],
                description=f"[{node.id}]:{node.description}",
                uid=self._uid(node.id, "sink"),
                operator=self._spec(OperatorKind.SQL_SINK, node),
            )
        self.env.add_operator(sink)
        self._record(node, sink)
        return sink

    def _filesystem_sink(self, node: ExecNode, input_t: Transformation, sink_id: int, table: str) -> Transformation:
        """Flink's FileSystemTableSink: in BATCH an output format sink named ``Filesystem``;
        streaming, a ``StreamingFileWriter`` operator then a discarding Sink V2 ``end`` of
        parallelism 1 (StreamingSink.writer and .sink), the ExecNode's id prefixing neither."""
        if not self.streaming:
            sink: Transformation = LegacySinkTransformation(
                id=sink_id,
                name="Filesystem",
                parallelism=input_t.parallelism,
                inputs=[input_t],
                uid=self._uid(node.id, "sink"),
                operator=self._spec(OperatorKind.SQL_SINK, node),
            )
            self.env.add_operator(sink)
            return self._record(node, sink)
        writer = OneInputTransformation(
            id=sink_id,
            name="StreamingFileWriter",
            parallelism=input_t.parallelism,
            inputs=[input_t],
            description="StreamingFileWriter",
            uid=self._uid(node.id, "streaming-writer"),
            operator=self._spec(OperatorKind.SQL_SINK, node),
        )
        self.env.add_operator(writer)
        self._record(node, writer)
        end = SinkTransformation(
            id=self.env.new_id(),
            name="end",
            parallelism=1,
            parallelism_configured=True,
            inputs=[writer],
            uid=self._uid(node.id, "discarding-sink"),
            operator=self._spec(OperatorKind.SQL_SINK, node, discarding=True),
            sink=TableSinkV2(table, "discarding"),
        )
        self.env.add_operator(end)
        return self._record(node, end)


def _generator_order(node: MultipleInputExecNode, inputs: list[Transformation]) -> list[Transformation]:
    """The inputs in the order Flink's TableOperatorWrapperGenerator numbers them: the members'
    outside inputs met walking down from the root, each input's subtree in turn."""
    members = {id(m) for m in node.members}
    by_node = {id(child): t for child, t in zip(node.inputs, inputs, strict=True)}
    ordered: list[Transformation] = []

    def visit(member: ExecNode) -> None:
        for child in member.inputs:
            if id(child) in members:
                visit(child)
            elif by_node[id(child)] not in ordered:
                ordered.append(by_node[id(child)])

    assert node.root is not None
    visit(node.root)
    return ordered


def _broadcast(transformation: Transformation) -> bool:
    return isinstance(transformation, PartitionTransformation) and transformation.partitioner.kind == BROADCAST


def _exchange_keys(node: ExecNode) -> tuple[int, ...]:
    return node.input_properties[0].keys if node.input_properties else ()


def _row_key(exchange: ExecNode) -> RowKey:
    """The key selector of the keyed operator reading ``exchange``: its key fields, typed."""
    keys = _exchange_keys(exchange)
    return RowKey(keys, tuple(runtime_type(exchange.fields[k].type) for k in keys))


def translate(
    translator: Translator, root: ExecNode, sink: ExecNode | None, sink_fields: list[Field], *, collect: bool
) -> Translation:
    """Add the transformations of ``root`` and its ``sink`` ExecNode (if any) to the translator's
    environment, ids from its counter. ``collect``: the sink is a SELECT's collect sink;
    ``sink_fields`` the sink's schema (its NOT NULL columns are enforced)."""
    if sink is None:
        return Translation(translator.translate(root), translator.by_exec_node)
    return Translation(translator.sink(sink, root, sink_fields, collect), translator.by_exec_node)
