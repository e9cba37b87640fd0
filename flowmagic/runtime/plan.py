"""Task plans: the picklable part of the ExecutionGraph that one vertex's tasks need.

Spark ships a vertex's plan to every task of the vertex, so it holds plain data and the
user's functions only, never the whole graph.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from flowmagic.errors import GraphError, IncompatibleStreamsError, NotSerializableError
from flowmagic.graph.execution_graph import ExecutionGraph, ExecutionJobVertex
from flowmagic.graph.job_graph import JobEdge
from flowmagic.graph.operator_params import FileSplitReaderParams, SqlOperatorParams
from flowmagic.graph.operators import OperatorSpec
from flowmagic.graph.partitioners import HASH
from flowmagic.graph.stream_graph import StreamGraph, StreamNode
from flowmagic.key_groups import java_hash_code
from flowmagic.runtime.connectors.sources import local_path
from flowmagic.runtime.failures import call_site_frame, describe, unpicklable_part, with_source_lines
from flowmagic.runtime.pyflink_keys import pyflink_key_hash
from flowmagic.runtime.registry import implementation
from flowmagic.runtime.wire import ChannelOrder
from flowmagic.vocabulary.dialect import JAVA, ApiDialect, api_dialect

__all__ = [
    "JAVA_KEY_HASH",
    "EdgePlan",
    "InputPlan",
    "KeyHash",
    "NodePlan",
    "VertexPlan",
    "build_plans",
    "channel_orders",
    "pickle_plan",
]


@dataclass(frozen=True)
class KeyHash:
    """The Java hash a ``key_by`` key goes by: the one rule of a HASH exchange and of the
    keyed state of the operator it feeds, so that a key's state is filed (and restored at
    any parallelism) by the key group that sent the key to its subtask.

    Java's ``keyBy`` (flowmagic's own API) hashes the key itself (``pyflink_key_type`` None);
    PyFlink keys its Java stream by ``Row.of(key)``, the key converted to its declared
    ``key_type`` or pickled (:func:`~flowmagic.runtime.pyflink_keys.pyflink_key_hash`).
    """

    pyflink_key_type: Any = None

    @property
    def hash_code(self) -> Callable[[Any], int]:
        """The Java ``hashCode`` a key is routed by, as a function of the key."""
        if self.pyflink_key_type is None:
            return java_hash_code
        return functools.partial(pyflink_key_hash, key_type=self.pyflink_key_type)

    @property
    def name(self) -> str:
        """How a snapshot's manifest names the rule its keyed state was filed by."""
        return JAVA_KEY_HASH if self.pyflink_key_type is None else f"PyFlink Row.of(key as {self.pyflink_key_type})"


#: The name of Java's rule: the one of every snapshot whose manifest names none.
JAVA_KEY_HASH = "Java hashCode of the key"


@dataclass
class EdgePlan:
    """A non-chained output of an operator: an exchange into another vertex."""

    slot: int
    #: The consumer vertex's id.
    consumer: str
    source_node: int
    output_tag: str | None
    ship_strategy: str
    key_selector: Any
    #: HASH: the Java hash a key is routed by (the consumer files its keyed state by it).
    key_hash: KeyHash
    custom_function: Any
    #: The user's ``file:line`` of the ``key_by`` or ``partition_custom`` (None for others).
    call_site: str | None
    consumer_parallelism: int
    consumer_max_parallelism: int
    #: Position of this edge among the consumer's inputs (orders the consumer's channels).
    consumer_input: int
    #: For POINTWISE edges: the consumer subtasks each producer subtask writes to.
    pointwise_channels: list[list[int]] | None
    #: BATCH pre-aggregation: the consumer's keyed reduce node, applied before the exchange.
    combine: NodePlan | None = None


@dataclass
class InputPlan:
    """One input of the vertex: which operator input side it feeds and its channels."""

    index: int
    side: int
    producer: str
    #: Per subtask of this vertex: the producer subtasks it reads.
    partitions: list[list[int]]


@dataclass
class NodePlan:
    id: int
    name: str
    operator: OperatorSpec
    is_source: bool
    #: The class that runs the operator (found on the driver: a connector defined outside
    #: flowmagic is registered on an executor once this, by reference, imports its module).
    implementation: type[Any]
    #: A source: whether it ends by itself (Flink's ``Boundedness``).
    bounded: bool = True
    #: The user's ``file:line`` that created the operator.
    call_site: str | None = None
    #: Chained outputs: (target node id, output tag or None).
    chained: list[tuple[int, str | None]] = field(default_factory=list)
    edges: list[EdgePlan] = field(default_factory=list)
    #: The rule of the HASH exchange(s) feeding the operator: its keyed state's key groups.
    key_hash: KeyHash = field(default_factory=KeyHash)


@dataclass
class VertexPlan:
    id: str
    name: str
    parallelism: int
    max_parallelism: int
    batch: bool
    head: int
    nodes: dict[int, NodePlan]
    inputs: list[InputPlan]
    out_edges: list[EdgePlan]
    has_results: bool
    #: BATCH: the head's sorted inputs, input side -> key selector (see ``runtime.sorting``).
    sorted_inputs: dict[int, Any] = field(default_factory=dict)
    #: A text file on a non-local file system (hdfs://, s3a://...): Spark's Hadoop reader
    #: feeds this vertex's split reader instead of its monitoring source.
    remote_text_path: str | None = None
    #: The job's global parameters (``get_job_parameter``).
    job_parameters: dict[str, str] = field(default_factory=dict)
    #: How often periodic watermark generators emit (``pipeline.auto-watermark-interval``; 0: never).
    auto_watermark_interval_ms: int = 200
    #: The API dialect of the job's program (see ``TaskInfo.dialect``).
    dialect: ApiDialect = JAVA

    @property
    def chain_order(self) -> list[int]:
        return list(self.nodes)


def build_plans(graph: ExecutionGraph) -> dict[str, VertexPlan]:
    """One plan per vertex of ``graph``.

    The keys of a ``key_by`` of PyFlink's API go where PyFlink sends them, those of
    flowmagic's own API by their Java hash; either way the consumer's keyed state is filed
    by the same rule (:class:`KeyHash`).
    """
    job_graph = graph.job_graph
    stream_graph = job_graph.stream_graph
    batch = job_graph.job_type == "BATCH"
    plans: dict[str, VertexPlan] = {}
    for vertex in graph.vertices.values():
        job_vertex = vertex.job_vertex
        nodes = {node_id: _node_plan(stream_graph.node(node_id)) for node_id in job_vertex.chain}
        for edge in job_vertex.chained_edges:
            nodes[edge.source_id].chained.append((edge.target_id, edge.output_tag))
        out_edges = []
        for slot, dataset in enumerate(job_vertex.produced_datasets):
            (job_edge,) = dataset.consumers
            consumer = graph.vertex(job_edge.target_vertex)
            stream_edge = job_edge.stream_edge
            plan = EdgePlan(
                slot=slot,
                consumer=consumer.id,
                source_node=stream_edge.source_id,
                output_tag=stream_edge.output_tag,
                # A batch SQL exchange names its key fields (HASH[k]): it hashes as any HASH.
                ship_strategy=HASH if job_edge.ship_strategy.startswith(HASH + "[") else job_edge.ship_strategy,
                key_selector=job_edge.partitioner.key_selector,
                key_hash=KeyHash(job_edge.partitioner.pyflink_key_type),
                custom_function=job_edge.partitioner.function,
                call_site=job_edge.partitioner.call_site,
                consumer_parallelism=consumer.parallelism,
                consumer_max_parallelism=consumer.max_parallelism,
                consumer_input=consumer.job_vertex.inputs.index(job_edge),
                pointwise_channels=(
                    _pointwise_channels(vertex, consumer, job_edge) if job_edge.partitioner.is_pointwise else None
                ),
                combine=_combine(batch, job_edge, stream_graph),
            )
            nodes[stream_edge.source_id].edges.append(plan)
            out_edges.append(plan)
        inputs = [
            InputPlan(
                index=position,
                side=job_edge.stream_edge.type_number,
                producer=job_edge.source_vertex,
                partitions=[subtask.inputs[position].partitions for subtask in vertex.subtasks],
            )
            for position, job_edge in enumerate(job_vertex.inputs)
        ]
        plans[vertex.id] = VertexPlan(
            id=vertex.id,
            name=vertex.name,
            parallelism=vertex.parallelism,
            max_parallelism=vertex.max_parallelism,
            batch=batch,
            head=job_vertex.head_node,
            nodes=nodes,
            inputs=inputs,
            out_edges=out_edges,
            has_results=any(_emits_results(node.operator) for node in nodes.values()),
            sorted_inputs=_sorted_inputs(batch, stream_graph.node(job_vertex.head_node).state_keys),
            remote_text_path=_remote_text_path(nodes[job_vertex.head_node].operator),
            job_parameters=dict(stream_graph.job_parameters),
            auto_watermark_interval_ms=stream_graph.auto_watermark_interval_ms,
            dialect=api_dialect(stream_graph.dialect),
        )
    return plans


def _node_plan(node: StreamNode) -> NodePlan:
    if node.operator is None:
        raise GraphError(f"stream node {node.label} runs no operator")
    operator = node.operator
    if isinstance(operator.params, SqlOperatorParams) and operator.params.physical is not None:
        # A SQL operator runs its runtime spec; the planner's node (and the plan under it)
        # stays on the driver, for the views that link vertices to plan nodes.
        operator = replace(operator, params=replace(operator.params, physical=None))
    return NodePlan(
        id=node.id,
        name=node.name,
        operator=operator,
        is_source=node.source_kind is not None,
        implementation=implementation(node.operator.kind),
        bounded=node.bounded,
        call_site=node.call_site,
        key_hash=_state_key_hash(node),
    )


def _state_key_hash(node: StreamNode) -> KeyHash:
    # Both keyed inputs of a two-input operator must route a key alike, or its state would
    # be split between subtasks: Flink refuses keyed inputs whose key types differ (PyFlink's
    # are Row(key_type), pickled bytes when none is declared).
    rules = list(
        dict.fromkeys(
            KeyHash(edge.partitioner.pyflink_key_type) for edge in node.in_edges if edge.partitioner.kind == HASH
        )
    )
    if len(rules) > 1:
        first, second = rules[0].pyflink_key_type, rules[1].pyflink_key_type
        raise IncompatibleStreamsError(
            f"Key types if input KeyedStreams don't match: Row(f0: {first}) and Row(f0: {second}). "
            f"(operator {node.label})"
        )
    return rules[0] if rules else KeyHash()


def _sorted_inputs(batch: bool, state_keys: tuple) -> dict[int, Any]:
    # A keyed input is sorted in BATCH. Two-input operators number their sides 1 and 2, and
    # only their keyed sides are sorted.
    if not batch or not state_keys:
        return {}
    if len(state_keys) == 1:
        return {0: state_keys[0]}
    return {side: key for side, key in enumerate(state_keys, start=1) if key is not None}


def _remote_text_path(operator: OperatorSpec | None) -> str | None:
    params = operator.params if operator is not None else None
    if not isinstance(params, FileSplitReaderParams):
        return None
    return None if local_path(params.path) is not None else params.path


def _emits_results(operator: OperatorSpec | None) -> bool:
    return operator is not None and implementation(operator.kind).emits_results


def _pointwise_channels(
    producer: ExecutionJobVertex, consumer: ExecutionJobVertex, job_edge: JobEdge
) -> list[list[int]]:
    """Per producer subtask, the consumer subtasks it writes to: the ExecutionGraph's wiring
    read the other way round."""
    position = consumer.job_vertex.inputs.index(job_edge)
    channels: list[list[int]] = [[] for _ in range(producer.parallelism)]
    for subtask in consumer.subtasks:
        for partition in subtask.inputs[position].partitions:
            channels[partition].append(subtask.index)
    return channels


def _combine(batch: bool, job_edge: JobEdge, stream_graph: StreamGraph) -> NodePlan | None:
    if not batch or job_edge.ship_strategy != HASH:
        return None
    consumer = stream_graph.node(job_edge.stream_edge.target_id)
    if consumer.operator is None or not implementation(consumer.operator.kind).combinable:
        return None
    return _node_plan(consumer)


def channel_orders(graph: ExecutionGraph, plans: dict[str, VertexPlan]) -> dict[str, ChannelOrder]:
    """Per vertex, the order its subtasks read their input channels in."""
    return {
        vertex_id: ChannelOrder.of_consumer(
            plan.parallelism, [graph.vertices[input_plan.producer].parallelism for input_plan in plan.inputs]
        )
        for vertex_id, plan in plans.items()
    }


def pickle_plan(plan: VertexPlan, dumps: Callable[[Any], bytes]) -> bytes:
    """``dumps(plan)``: what an executor ships to the vertex's tasks. A user function that
    cannot be pickled raises :class:`NotSerializableError` naming its operator (or key_by),
    the line that created it and what in it cannot be pickled."""
    try:
        return dumps(plan)
    except Exception as error:
        raise _not_serializable(plan, dumps, error) from None


def _not_serializable(plan: VertexPlan, dumps: Callable[[Any], bytes], error: Exception) -> NotSerializableError:
    # Per user function: who wrote it, where, its description, and what holds it.
    suspects: list[tuple[str, str | None, str, Any]] = []
    for node in plan.nodes.values():
        suspects.append(_operator_suspect(node))
        for edge in node.edges:
            method = "partition_custom()" if edge.custom_function is not None else "key_by()"
            suspects.append(
                (f"{method} was called", edge.call_site, f"the key selector of {method}", edge.key_selector)
            )
            suspects.append(
                (f"{method} was called", edge.call_site, f"the partitioner of {method}", edge.custom_function)
            )
            if edge.combine is not None:
                suspects.append(_operator_suspect(edge.combine))
    for written, call_site, what, holder in suspects:
        try:
            dumps(holder)
        except Exception as cause:
            where = with_source_lines(call_site_frame(call_site, written))
            return NotSerializableError(
                f"The implementation of {what} is not serializable. The object probably contains or references "
                f"non serializable fields: {unpicklable_part(holder, dumps, what)} ({describe(cause)}).\n"
                + "".join(f"{line}\n" for line in where)
                + "Spark ships every function to its tasks by pickling it: create such objects inside the function, "
                "or in its open()."
            )
    return NotSerializableError(f"The tasks of {plan.name!r} cannot be pickled: {describe(error)}")


def _operator_suspect(node: NodePlan) -> tuple[str, str | None, str, Any]:
    return (f"operator {node.name!r} was created", node.call_site, f"the function of {node.name!r}", node.operator)
