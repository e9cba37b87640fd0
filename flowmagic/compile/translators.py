"""One translator per transformation kind (Flink's ``TransformationTranslator`` registry).

A translator adds the StreamNodes and edges of one transformation, whose inputs are
already translated, and returns the node ids its consumers connect to. Adding a kind of
transformation means adding one function here and one entry in ``_TRANSLATORS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flowmagic.errors import GraphError
from flowmagic.graph.operator_params import SinkParams
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.graph.partitioners import FORWARD, Partitioner
from flowmagic.graph.transformations import (
    CacheTransformation,
    LegacySinkTransformation,
    MultipleInputTransformation,
    OneInputTransformation,
    PartitionTransformation,
    SideOutputTransformation,
    SinkTransformation,
    SourceTransformation,
    Transformation,
    TwoInputTransformation,
    UnionTransformation,
)

if TYPE_CHECKING:
    from flowmagic.compile.stream_graph_generator import StreamGraphGenerator

__all__ = ["translator_for"]

# A translator takes the transformation class it is registered for (hence Any).
Translator = Callable[["StreamGraphGenerator", Any, list[list[int]], str], list[int]]


def _source(gen: StreamGraphGenerator, t: SourceTransformation, inputs: list[list[int]], group: str) -> list[int]:
    gen.add_node(t, f"Source: {t.name}", group, source_kind="legacy" if t.legacy else "new")
    return [t.id]


def _one_input(gen: StreamGraphGenerator, t: OneInputTransformation, inputs: list[list[int]], group: str) -> list[int]:
    keyed = t.state_key is not None
    gen.add_node(t, t.name, group, state_keys=(t.state_key,) if keyed else (), keyed_batch_input=keyed)
    for input_id in inputs[0]:
        gen.add_edge(input_id, t.id, 0)
    return [t.id]


def _two_input(gen: StreamGraphGenerator, t: TwoInputTransformation, inputs: list[list[int]], group: str) -> list[int]:
    # TwoInputTransformationTranslator: each keyed input is sorted in BATCH, the other one
    # passes through; one sorted input is enough to make the operator head its chain.
    keyed = t.state_key1 is not None or t.state_key2 is not None
    gen.add_node(t, t.name, group, state_keys=(t.state_key1, t.state_key2), keyed_batch_input=keyed)
    for type_number, input_ids in enumerate(inputs, start=1):
        for input_id in input_ids:
            gen.add_edge(input_id, t.id, type_number)
    return [t.id]


def _multiple_input(
    gen: StreamGraphGenerator, t: MultipleInputTransformation, inputs: list[list[int]], group: str
) -> list[int]:
    gen.add_node(t, t.name, group).multiple_inputs = True
    for type_number, input_ids in enumerate(inputs, start=1):
        for input_id in input_ids:
            gen.add_edge(input_id, t.id, type_number)
    return [t.id]


def _legacy_sink(
    gen: StreamGraphGenerator, t: LegacySinkTransformation, inputs: list[list[int]], group: str
) -> list[int]:
    keyed = t.state_key is not None
    gen.add_node(
        t, f"Sink: {t.name}", group, sink=True, state_keys=(t.state_key,) if keyed else (), keyed_batch_input=keyed
    )
    for input_id in inputs[0]:
        gen.add_edge(input_id, t.id, 0)
    return [t.id]


def _sink_v2(gen: StreamGraphGenerator, t: SinkTransformation, inputs: list[list[int]], group: str) -> list[int]:
    # Flink expands a Sink V2 anew at every translation, drawing fresh ids: the writer takes
    # the first, a committer the third of four (the others go to internal transformations).
    writer_id = gen.new_id()
    writer = OperatorSpec(OperatorKind.SINK_WRITER, SinkParams(sink=t.sink, type_info=t.record_type))
    if t.operator is not None and t.operator.kind == OperatorKind.SQL_SINK:
        # A SQL table's Sink V2 (blackhole, a streaming file sink's end): its writer is the SQL sink's.
        writer = t.operator
    gen.add_node(t, f"{t.name}: Writer", group, node_id=writer_id, uid=t.uid, operator=writer)
    for input_id in inputs[0]:
        gen.add_edge(input_id, writer_id, 0)
    if not t.sink.has_committer:
        return []
    committables = writer_id
    if gen.batch:
        # In BATCH the committer reads the writers' committables through a blocking FORWARD
        # exchange (so it commits once they all finished): it is not chained to the writer.
        committables = gen.add_virtual_partition(writer_id, Partitioner(FORWARD), "BATCH")
    else:
        gen.new_id()
    committer_id = gen.new_id()
    gen.new_id()
    gen.add_node(
        t,
        f"{t.name}: Committer",
        group,
        node_id=committer_id,
        uid=f"Sink Committer: {t.uid}" if t.uid is not None else None,
        operator=OperatorSpec(OperatorKind.SINK_COMMITTER, SinkParams(sink=t.sink)),
    )
    gen.add_edge(committables, committer_id, 0)
    return []


def _cache(gen: StreamGraphGenerator, t: CacheTransformation, inputs: list[list[int]], group: str) -> list[int]:
    # Flink's CacheTransformationTranslator: STREAMING ignores the cache; BATCH writes the
    # input's result with a CacheWrite node. Either way consumers read the input itself.
    if gen.batch:
        gen.add_node(t, t.name, group)
        for input_id in inputs[0]:
            gen.add_edge(input_id, t.id, 0, persistent=True)
    return inputs[0]


def _union(gen: StreamGraphGenerator, t: UnionTransformation, inputs: list[list[int]], group: str) -> list[int]:
    return [input_id for input_ids in inputs for input_id in input_ids]


def _partition(gen: StreamGraphGenerator, t: PartitionTransformation, inputs: list[list[int]], group: str) -> list[int]:
    return [gen.add_virtual_partition(input_id, t.partitioner, t.exchange_mode) for input_id in inputs[0]]


def _side_output(
    gen: StreamGraphGenerator, t: SideOutputTransformation, inputs: list[list[int]], group: str
) -> list[int]:
    return [gen.add_virtual_side_output(input_id, t.tag) for input_id in inputs[0]]


_TRANSLATORS: dict[type[Transformation], Translator] = {
    SourceTransformation: _source,
    OneInputTransformation: _one_input,
    TwoInputTransformation: _two_input,
    MultipleInputTransformation: _multiple_input,
    LegacySinkTransformation: _legacy_sink,
    SinkTransformation: _sink_v2,
    UnionTransformation: _union,
    CacheTransformation: _cache,
    PartitionTransformation: _partition,
    SideOutputTransformation: _side_output,
}


def translator_for(transformation: Transformation) -> Translator:
    """The translator registered for ``transformation``'s class."""
    try:
        return _TRANSLATORS[type(transformation)]
    except KeyError:
        raise GraphError(f"No translator for {type(transformation).__name__}") from None
