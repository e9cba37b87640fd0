"""Flink's ExecNode graph: plain data, one node per operator kind, with Flink's type names
(``stream-exec-group-aggregate_1``), ids from the session's counter and the descriptions the
Optimized Execution Plan prints. Translating these into transformations is the next step
(the compiled plans in tests/conformance/sql show the same graph as Flink serializes it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from flowmagic.sql import physical as ph
from flowmagic.sql import tree
from flowmagic.sql.logical import Field

#: Flink's ExecNode type name and version of each physical node, streaming mode.
STREAM_TYPES: dict[type[ph.PhysicalNode], str] = {
    ph.TableSourceScan: "stream-exec-table-source-scan_2",
    ph.Values: "stream-exec-values_1",
    ph.DropUpdateBefore: "stream-exec-drop-update-before_1",
    ph.Calc: "stream-exec-calc_1",
    ph.Exchange: "stream-exec-exchange_1",
    ph.GroupAggregate: "stream-exec-group-aggregate_1",
    ph.LocalWindowAggregate: "stream-exec-local-window-aggregate_1",
    ph.GlobalWindowAggregate: "stream-exec-global-window-aggregate_1",
    ph.WindowAggregate: "stream-exec-window-aggregate_1",
    ph.WatermarkAssigner: "stream-exec-watermark-assigner_1",
    ph.Join: "stream-exec-join_1",
    ph.IntervalJoin: "stream-exec-interval-join_1",
    ph.Rank: "stream-exec-rank_1",
    ph.SortLimit: "stream-exec-sort-limit_1",
    ph.Union: "stream-exec-union_1",
    ph.Sink: "stream-exec-sink_2",
}
_DEDUPLICATE = "stream-exec-deduplicate_1"


def _batch_type(node: ph.PhysicalNode) -> str:
    """The batch ExecNode type name (``batch-exec-sort-aggregate_1``)."""
    if isinstance(node, ph.BatchAggregate):
        return f"batch-exec-{node.strategy.lower()}-aggregate_1"
    if isinstance(node, ph.Sort):
        return "batch-exec-sort_1"
    if isinstance(node, ph.WindowTableFunction):
        return "batch-exec-window-table-function_1"
    if isinstance(node, ph.OverAggregate):
        return "batch-exec-over-aggregate_1"
    if isinstance(node, ph.BatchRank):
        return "batch-exec-rank_1"
    if isinstance(node, ph.NestedLoopJoin):
        return "batch-exec-nested-loop-join_1"
    if isinstance(node, ph.Expand):
        return "batch-exec-expand_1"
    if isinstance(node, ph.HashJoin):
        return "batch-exec-adaptive-join_1" if node.adaptive else "batch-exec-hash-join_1"
    return STREAM_TYPES.get(type(node), "").replace("stream-exec-", "batch-exec-")


def _reads_sorted_partitions(node: ph.PhysicalNode) -> bool:
    sort_aggregate = isinstance(node, ph.BatchAggregate) and node.strategy == "Sort"
    return sort_aggregate or isinstance(node, ph.OverAggregate | ph.BatchRank)


def _required_hash(node: ph.PhysicalNode) -> tuple[int, ...]:
    """The keys a batch node needs its input hashed on (none: it needs no hash distribution)."""
    if isinstance(node, ph.BatchAggregate) and not node.local:
        return node.grouping
    if isinstance(node, ph.OverAggregate):
        return node.partition
    if isinstance(node, ph.BatchRank) and node.is_global:
        return node.partition
    return ()


_KEEPS_DISTRIBUTION = ("batch-exec-calc_1", "batch-exec-sort_1")


@dataclass(frozen=True)
class InputProperty:
    """What an ExecNode requires of one input: a distribution (``UNKNOWN``, ``HASH`` on keys,
    ``SINGLETON``, ``BROADCAST``, ``KEEP_INPUT_AS_IS`` a hash made further down), its dam
    behaviour and priority."""

    distribution: str = "UNKNOWN"
    keys: tuple[int, ...] = ()
    dam_behavior: str = "PIPELINED"
    priority: int = 0


@dataclass(eq=False)
class ExecNode:
    id: int
    type: str
    #: The operator name Flink's simplified names use (``GroupAggregate``).
    name: str
    description: str
    fields: list[Field]
    inputs: list[ExecNode] = field(default_factory=list)
    input_properties: list[InputProperty] = field(default_factory=list)
    #: The physical node it was made from (None for the forward exchanges batch plans add).
    physical: ph.PhysicalNode | None = field(default=None, repr=False)
    #: An exchange that hands on its input only once complete (``shuffle_mode=[BATCH]``).
    blocking: bool = False

    def output_type(self) -> object:
        """The output row type as Flink's compiled plan serializes it."""
        if any(f.type.time_attribute for f in self.fields):
            return {
                "type": "ROW",
                "fields": [{"name": f.name, "fieldType": f.type.serializable()} for f in self.fields],
            }
        return "ROW<" + ", ".join(f"`{f.name}` {f.type.serializable()}" for f in self.fields) + ">"


def _input_property(node: ph.PhysicalNode) -> InputProperty:
    if isinstance(node, ph.Exchange):
        if node.distribution == "hash":
            return InputProperty("HASH", node.keys)
        if node.distribution == "broadcast":
            return InputProperty("BROADCAST")
        return InputProperty("SINGLETON")
    return InputProperty()


def _indexes(node: ExecNode, names: str) -> tuple[int, ...]:
    fields = [f.name for f in node.fields]
    return tuple(fields.index(name) for name in names.split(", ") if name in fields)


class ExecGraphBuilder:
    """Translates a physical plan into ExecNodes, inputs first, numbering them from ``next_id``."""

    def __init__(self, next_id: int, streaming: bool = True) -> None:
        self.next_id = next_id
        self.streaming = streaming
        # Identical sub-plans become one ExecNode (Flink's SubplanReuser).
        self._built: dict[tuple[str, str, tuple[int, ...]], ExecNode] = {}
        self._forwards: list[ExecNode] = []
        self._adaptive_joins: list[ExecNode] = []

    def _forward(self, child: ExecNode) -> ExecNode:
        """The forward exchange Flink's batch planner puts between a Sort and the operator that
        reads its sorted output (so that the adaptive batch scheduler keeps their partitions).
        Flink's ForwardHashExchangeProcessor adds these once the graph is built, so they are
        numbered after all other nodes (inputs first); until then their ids are placeholders."""
        forward = ExecNode(
            id=-1 - len(self._forwards),
            type="batch-exec-exchange_1",
            name="Exchange",
            description="Exchange(distribution=[forward])",
            fields=list(child.fields),
            inputs=[child],
            input_properties=[InputProperty()],
        )
        self._forwards.append(forward)
        return forward

    def _keep_input_as_is(self, child: ExecNode, names: str) -> ExecNode:
        """``child`` behind the ``keep_input_as_is[hash[..]]`` exchange Flink's
        ForwardHashExchangeProcessor adds where a node needs hashed input that no exchange
        directly feeds (the hash was made further down, under a Calc); it goes on through Calcs
        and Sorts to the exchange, so that the adaptive batch scheduler keeps the partitioning."""
        if child.type == "batch-exec-exchange_1":
            return child
        if child.type in _KEEPS_DISTRIBUTION:
            child.inputs[0] = self._keep_input_as_is(child.inputs[0], names)
        kept = ExecNode(
            id=-1 - len(self._forwards),
            type="batch-exec-exchange_1",
            name="Exchange",
            description=f"Exchange(distribution=[keep_input_as_is[hash[{names}]]])",
            fields=list(child.fields),
            inputs=[child],
            input_properties=[InputProperty("KEEP_INPUT_AS_IS", _indexes(child, names))],
        )
        self._forwards.append(kept)
        return kept

    def break_deadlocks(self, root: ExecNode) -> None:
        """Flink's DeadlockBreakupProcessor (batch). A join reads its build side to the end
        before its probe side; when both sides read one reused sub-plan, that sub-plan would
        wait on the probe side while the join waits on the build side. The probe input then
        gets a blocking exchange (``shuffle_mode=[BATCH]``): a copy of the exchange it reads,
        or a new ``any`` exchange above it. Numbered as they are made, before the
        MultipleInputs and the exchanges Flink adds later."""
        if self.streaming:
            return
        for node in nodes(root):
            physical = node.physical
            if not isinstance(physical, ph.HashJoin | ph.NestedLoopJoin):
                continue
            probe = 1 if physical.build == "left" else 0
            build_side = _pipelined(node.inputs[1 - probe])
            if not build_side & _pipelined(node.inputs[probe]):
                continue
            child = node.inputs[probe]
            self.next_id += 1
            if child.type == "batch-exec-exchange_1":
                blocking = ExecNode(
                    id=self.next_id,
                    type=child.type,
                    name=child.name,
                    description=child.description[:-1] + ", shuffle_mode=[BATCH])",
                    fields=list(child.fields),
                    inputs=list(child.inputs),
                    input_properties=list(child.input_properties),
                    physical=child.physical,
                    blocking=True,
                )
            else:
                blocking = ExecNode(
                    id=self.next_id,
                    type="batch-exec-exchange_1",
                    name="Exchange",
                    description="Exchange(distribution=[any], shuffle_mode=[BATCH])",
                    fields=list(child.fields),
                    inputs=[child],
                    input_properties=[InputProperty()],
                    blocking=True,
                )
            node.inputs[probe] = blocking

    def finish(self) -> None:
        """Number the forward exchanges added while building, after every other node, then the
        adaptive joins: Flink's AdaptiveJoinProcessor runs after the ForwardHashExchangeProcessor
        and replaces each hash join by a new AdaptiveJoin node, which takes the next id."""
        for exchange in self._forwards:
            self.next_id += 1
            exchange.id = self.next_id
        self._forwards.clear()
        for join in self._adaptive_joins:
            self.next_id += 1
            join.id = self.next_id
        self._adaptive_joins.clear()

    def build(self, node: ph.PhysicalNode) -> ExecNode:
        """The ExecNode graph of ``node``, numbered as Flink's planner numbers it but for the
        exchanges Flink adds afterwards, which :meth:`finish` numbers."""
        inputs = []
        for child in node.inputs:
            built = self.build(child)
            hashed = () if self.streaming else _required_hash(node)
            names = ", ".join(child.fields[k].name for k in hashed)
            sorted_input = not self.streaming and isinstance(child, ph.Sort) and _reads_sorted_partitions(node)
            if hashed and sorted_input and not isinstance(child.inputs[0], ph.Exchange):
                built.inputs[0] = self._keep_input_as_is(built.inputs[0], names)
            elif hashed and not sorted_input:
                built = self._keep_input_as_is(built, names)
            if sorted_input:
                built = self._forward(built)
            inputs.append(built)
        exec_type = STREAM_TYPES.get(type(node), "") if self.streaming else _batch_type(node)
        if isinstance(node, ph.Rank) and node.deduplicate is not None:
            exec_type = _DEDUPLICATE
        name = node.name(True)
        description = tree.call(name, node.exec_terms())
        key = (exec_type, description, tuple(i.id for i in inputs))
        if key in self._built:
            return self._built[key]
        self.next_id += 1
        properties = [_input_property(node)] if isinstance(node, ph.Exchange) else [InputProperty() for _ in inputs]
        built = ExecNode(
            id=self.next_id,
            type=exec_type,
            name=name,
            description=description,
            fields=list(node.fields),
            inputs=inputs,
            input_properties=properties,
            physical=node,
        )
        self._built[key] = built
        if name == "AdaptiveJoin":
            self._adaptive_joins.append(built)
        return built


def _pipelined(node: ExecNode) -> set[int]:
    """The nodes whose rows reach ``node`` without a blocking exchange between."""
    found = {id(node)}
    if not node.blocking:
        for child in node.inputs:
            found |= _pipelined(child)
    return found


@dataclass
class _Line:
    text: str
    children: list[_Line]
    node: ExecNode


def _tree(root: ExecNode) -> _Line:
    consumers: dict[int, int] = {}
    for node in nodes(root):
        for child in node.inputs:
            consumers[id(child)] = consumers.get(id(child), 0) + 1
    reuse_ids: dict[int, int] = {}

    def lines(node: ExecNode) -> _Line:
        if consumers.get(id(node), 0) < 2:
            return _Line(node.description, [lines(c) for c in node.inputs], node)
        if id(node) in reuse_ids:
            return _Line(f"Reused(reference_id=[{reuse_ids[id(node)]}])", [], node)
        reuse_ids[id(node)] = len(reuse_ids) + 1
        return _Line(f"{node.description}(reuse_id=[{reuse_ids[id(node)]}])", [lines(c) for c in node.inputs], node)

    return lines(root)


def render(root: ExecNode) -> str:
    """The Optimized Execution Plan: each ExecNode's description in Flink's tree; a node with
    several consumers is printed once with ``(reuse_id=[n])``, then as ``Reused``."""
    return tree.render(_tree(root), lambda line: line.text, lambda line: line.children)


def rendered_nodes(root: ExecNode) -> list[ExecNode]:
    """The ExecNode of each line :func:`render` prints, in order."""
    out: list[ExecNode] = []

    def visit(line: _Line) -> None:
        out.append(line.node)
        for child in line.children:
            visit(child)

    visit(_tree(root))
    return out


def nodes(root: ExecNode) -> list[ExecNode]:
    """Every node once, inputs first (id order)."""
    out: list[ExecNode] = []
    visited: set[int] = set()

    def visit(node: ExecNode) -> None:
        if id(node) in visited:
            return
        visited.add(id(node))
        for child in node.inputs:
            visit(child)
        out.append(node)

    visit(root)
    return out
