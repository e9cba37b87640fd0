"""Pass 1: transformations -> StreamGraph (Flink's ``StreamGraphGenerator``).

Walks the transformations from the ones the program registered (sinks and other leaves),
translating each input before its consumer, memoized by identity. Each transformation kind
has one translator in :mod:`flowmagic.compile.translators`. Virtual nodes (partitioning,
side outputs) take fresh ids and are resolved into edge properties when edges are added.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from flowmagic.compile.hashing import traverse_stream_graph_and_generate_hashes
from flowmagic.compile.translators import translator_for
from flowmagic.errors import ForwardPartitioningError
from flowmagic.graph.operators import ChainingStrategy, OperatorSpec
from flowmagic.graph.partitioners import FORWARD, REBALANCE, Partitioner
from flowmagic.graph.stream_graph import UNDEFINED, Passes, StreamEdge, StreamGraph, StreamNode
from flowmagic.graph.transformations import (
    PARALLELISM_DEFAULT,
    SourceTransformation,
    Transformation,
)
from flowmagic.vocabulary.pipeline_config import PipelineConfig, RuntimeExecutionMode

__all__ = ["DEFAULT_SLOT_SHARING_GROUP", "StreamGraphGenerator", "generate_stream_graph"]

DEFAULT_SLOT_SHARING_GROUP = "default"
STREAMING_JOB_NAME = "Flink Streaming Job"
BATCH_JOB_NAME = "Flink Batch Job"


def generate_stream_graph(
    transformations: Iterable[Transformation],
    config: PipelineConfig,
    new_id: Callable[[], int],
    passes: Passes | None = None,
) -> StreamGraph:
    """Build the StreamGraph of ``transformations``; ``new_id`` hands out ids for virtual nodes.

    ``passes`` are the passes the graph hands itself to in ``get_job_graph()``.
    """
    graph = StreamGraphGenerator(list(transformations), config, new_id).generate()
    graph.passes = passes
    return graph


def _all_sources(roots: list[Transformation]) -> list[SourceTransformation]:
    seen: set[int] = set()
    sources: list[SourceTransformation] = []
    stack = list(roots)
    while stack:
        transformation = stack.pop()
        if id(transformation) in seen:
            continue
        seen.add(id(transformation))
        if isinstance(transformation, SourceTransformation):
            sources.append(transformation)
        stack.extend(transformation.inputs)
    return sources


class StreamGraphGenerator:
    """Translates a list of transformations into one StreamGraph."""

    def __init__(self, transformations: list[Transformation], config: PipelineConfig, new_id: Callable[[], int]):
        self.transformations = transformations
        self.config = config
        self.new_id = new_id
        mode = config.runtime_mode
        self.batch = mode is RuntimeExecutionMode.BATCH or (
            mode is RuntimeExecutionMode.AUTOMATIC and all(s.bounded for s in _all_sources(transformations))
        )
        self.graph = StreamGraph(
            job_name=config.job_name or (BATCH_JOB_NAME if self.batch else STREAMING_JOB_NAME),
            job_type="BATCH" if self.batch else "STREAMING",
            # BATCH runs on the adaptive batch scheduler, which decides parallelism at runtime.
            dynamic=self.batch,
            chaining_enabled=config.chaining_enabled,
            default_parallelism=config.parallelism,
            job_parameters=dict(config.job_parameters),
            auto_watermark_interval_ms=config.auto_watermark_interval_ms,
            dialect=config.dialect.name,
        )
        # Keyed by identity; the value keeps the transformation alive so no id() is reused.
        self._already_transformed: dict[int, tuple[Transformation, list[int]]] = {}
        self._virtual_partitions: dict[int, tuple[int, Partitioner, str | None]] = {}
        self._virtual_side_outputs: dict[int, tuple[int, str]] = {}

    def generate(self) -> StreamGraph:
        for transformation in self.transformations:
            self.transform(transformation)
        self.graph.nodes = dict(sorted(self.graph.nodes.items()))
        self.graph.operator_hashes = traverse_stream_graph_and_generate_hashes(self.graph)
        return self.graph

    def transform(self, transformation: Transformation) -> list[int]:
        """Translate ``transformation`` (after its inputs, in order) and return its node ids."""
        # Flink recurses into the inputs; an explicit stack keeps deep programs (long union
        # or partition chains) clear of Python's recursion limit, in the same order.
        stack: list[tuple[Transformation, bool]] = [(transformation, False)]
        while stack:
            current, inputs_done = stack.pop()
            if id(current) in self._already_transformed:
                continue
            if not inputs_done:
                if current.max_parallelism <= 0 and self.config.max_parallelism > 0:
                    current.max_parallelism = self.config.max_parallelism
                stack.append((current, True))
                stack.extend((parent, False) for parent in reversed(current.inputs))
                continue
            input_ids = [self._already_transformed[id(parent)][1] for parent in current.inputs]
            group = self._determine_slot_sharing_group(
                current.slot_sharing_group, [i for ids in input_ids for i in ids]
            )
            ids = translator_for(current)(self, current, input_ids, group)
            self._already_transformed[id(current)] = (current, ids)
        return self._already_transformed[id(transformation)][1]

    def _determine_slot_sharing_group(self, specified: str | None, input_ids: list[int]) -> str:
        if specified is not None:
            return specified
        group: str | None = None
        for input_id in input_ids:
            candidate = self._slot_sharing_group_of(input_id)
            if group is None:
                group = candidate
            elif group != candidate:
                return DEFAULT_SLOT_SHARING_GROUP
        return group if group is not None else DEFAULT_SLOT_SHARING_GROUP

    def _slot_sharing_group_of(self, node_id: int) -> str | None:
        while True:
            if node_id in self._virtual_side_outputs:
                node_id = self._virtual_side_outputs[node_id][0]
            elif node_id in self._virtual_partitions:
                node_id = self._virtual_partitions[node_id][0]
            else:
                return self.graph.nodes[node_id].slot_sharing_group

    # -- building blocks used by the translators ---------------------------------------

    def add_node(
        self,
        transformation: Transformation,
        name: str,
        slot_sharing_group: str,
        *,
        source_kind: str | None = None,
        sink: bool = False,
        state_keys: tuple = (),
        keyed_batch_input: bool = False,
        node_id: int | None = None,
        uid: str | None = None,
        operator: OperatorSpec | None = None,
    ) -> StreamNode:
        """Add the StreamNode of a transformation, configured from it.

        ``node_id``, ``uid`` and ``operator`` override the transformation's own for the
        nodes a Sink V2 expands into.
        """
        parallelism = transformation.parallelism
        if parallelism == PARALLELISM_DEFAULT or (
            self.config.override_parallelism and not transformation.parallelism_configured
        ):
            parallelism = self.config.parallelism
        strategy = getattr(transformation, "chaining_strategy", ChainingStrategy.ALWAYS)
        if (
            keyed_batch_input
            and self.batch
            and strategy in (ChainingStrategy.ALWAYS, ChainingStrategy.HEAD_WITH_SOURCES)
        ):
            # BatchExecutionUtils: keyed inputs are sorted, so the operator heads its chain.
            strategy = ChainingStrategy.HEAD
        node = StreamNode(
            id=transformation.id if node_id is None else node_id,
            name=name,
            parallelism=parallelism,
            operator=operator if operator is not None else getattr(transformation, "operator", None),
            description=transformation.description,
            max_parallelism=transformation.max_parallelism,
            parallelism_configured=transformation.parallelism_configured,
            slot_sharing_group=slot_sharing_group,
            chaining_strategy=strategy,
            uid=transformation.uid if node_id is None else uid,
            uid_hash=transformation.uid_hash.lower() if transformation.uid_hash else None,
            source_kind=source_kind,
            bounded=getattr(transformation, "bounded", True),
            state_keys=state_keys,
            call_site=transformation.call_site,
        )
        self.graph.nodes[node.id] = node
        if source_kind is not None:
            self.graph.source_ids.append(node.id)
        if sink:
            self.graph.sink_ids.append(node.id)
        return node

    def add_virtual_partition(self, input_id: int, partitioner: Partitioner, exchange_mode: str | None) -> int:
        virtual_id = self.new_id()
        self._virtual_partitions[virtual_id] = (input_id, partitioner, exchange_mode)
        return virtual_id

    def add_virtual_side_output(self, input_id: int, tag: str) -> int:
        virtual_id = self.new_id()
        self._virtual_side_outputs[virtual_id] = (input_id, tag)
        return virtual_id

    def add_edge(self, upstream_id: int, downstream_id: int, type_number: int, *, persistent: bool = False) -> None:
        """Connect ``upstream_id`` (possibly virtual) to ``downstream_id``."""
        partitioner: Partitioner | None = None
        output_tag: str | None = None
        exchange_mode: str | None = None
        while True:
            if upstream_id in self._virtual_side_outputs:
                upstream_id, tag = self._virtual_side_outputs[upstream_id]
                output_tag = output_tag if output_tag is not None else tag
            elif upstream_id in self._virtual_partitions:
                upstream_id, own_partitioner, exchange_mode = self._virtual_partitions[upstream_id]
                # The partition nearest the consumer wins; the exchange mode nearest the producer.
                partitioner = partitioner if partitioner is not None else own_partitioner
            else:
                break
        self._create_actual_edge(
            upstream_id, downstream_id, type_number, partitioner, output_tag, exchange_mode, persistent
        )

    def _create_actual_edge(
        self,
        upstream_id: int,
        downstream_id: int,
        type_number: int,
        partitioner: Partitioner | None,
        output_tag: str | None,
        exchange_mode: str | None,
        persistent: bool = False,
    ) -> None:
        upstream = self.graph.nodes[upstream_id]
        downstream = self.graph.nodes[downstream_id]
        if partitioner is None:
            if upstream.parallelism == downstream.parallelism:
                partitioner = Partitioner(FORWARD, unspecified=self.graph.dynamic)
            else:
                partitioner = Partitioner(REBALANCE)
        if partitioner.is_forward and upstream.parallelism != downstream.parallelism:
            raise ForwardPartitioningError(
                "Forward partitioning does not allow change of parallelism. Upstream operation: "
                f"{upstream.label} parallelism: {upstream.parallelism}, downstream operation: "
                f"{downstream.label} parallelism: {downstream.parallelism} You must use another "
                "partitioning strategy, such as broadcast, rebalance, shuffle or global." + _created_at(downstream)
            )
        unique_id = sum(1 for edge in upstream.out_edges if edge.target_id == downstream_id)
        edge = StreamEdge(
            source_id=upstream_id,
            target_id=downstream_id,
            type_number=type_number,
            partitioner=partitioner,
            output_tag=output_tag,
            exchange_mode=exchange_mode or UNDEFINED,
            unique_id=unique_id,
            persistent=persistent,
        )
        upstream.out_edges.append(edge)
        downstream.in_edges.append(edge)


def _created_at(node: StreamNode) -> str:
    return f"\n(operator {node.name!r} created at {node.call_site})" if node.call_site else ""
