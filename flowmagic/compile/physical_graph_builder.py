"""Pass 4: ExecutionGraph -> physical graph (what Flink's scheduler deploys, and where).

Slot sharing follows Flink 2.3's ``LocalInputPreferredSlotSharingStrategy``. Job vertices
are visited in topological order, each one's subtasks in index order. A subtask first looks
among the shared slots of its producers (when the producer is in the same slot sharing
group): every group of consumers reading the same producer partitions (one group per
ALL_TO_ALL input; per POINTWISE input, the consumers reading the same partitions) has
the producers' slots as candidates, in order, and each candidate is offered once, taken by
the first subtask that may use it. A subtask that found none takes the first slot of its
group still without a subtask of its vertex, or opens a new slot. So a pipeline of equal
parallelism lines up slot by slot, and a job needs, per slot sharing group, as many slots
as the group's highest parallelism.

Slots go to TaskManagers in the order the strategy opened them, filling one TaskManager
before the next, as Flink 2.3's default slot allocation does (``taskmanager.load-balance.mode``
NONE); which physical TaskManager comes first is Flink's choice and does not matter here.
Recorded on Flink 2.3 MiniClusters (tests/conformance/physical). A job needing more slots
than the cluster has fails in Flink with ``NoResourceAvailableException``; here it gets the
same message in :attr:`PhysicalGraph.error`, with its slots placed nowhere.

Partitions, gates and channels are Flink's deployment descriptors: a task writes one
ResultPartition per produced result, with as many subpartitions as consumer subtasks read
it, and reads one InputGate per input, with one InputChannel per producer partition.
"""

from __future__ import annotations

from flowmagic.errors import InvalidArgumentError
from flowmagic.graph.execution_graph import ExecutionGraph, ExecutionJobVertex
from flowmagic.graph.physical_graph import (
    NOT_ENOUGH_SLOTS,
    ChannelKind,
    InputChannel,
    InputGate,
    PhysicalGraph,
    PhysicalTask,
    ResultPartition,
    Slot,
    SlotSharingGroupDemand,
)

__all__ = ["build_physical_graph", "local_cluster"]

_Subtask = tuple[str, int]


def local_cluster(
    execution_graph: ExecutionGraph, taskmanagers: int | None = None, slots_per_taskmanager: int | None = None
) -> tuple[int, int]:
    """The cluster a local environment starts for the job (Flink's ``PerJobMiniClusterFactory``):
    one TaskManager unless told, and as many slots per TaskManager as it takes to give the
    job's highest parallelism one slot each, unless ``taskmanager.numberOfTaskSlots`` is set."""
    if taskmanagers is None:
        taskmanagers = 1
    if taskmanagers < 1:
        raise InvalidArgumentError(f"The number of TaskManagers must be at least 1, got {taskmanagers}.")
    if slots_per_taskmanager is None:
        highest = max((vertex.parallelism for vertex in execution_graph.vertices.values()), default=1)
        slots_per_taskmanager = -(-highest // taskmanagers)
    if slots_per_taskmanager < 1:
        raise InvalidArgumentError(f"taskmanager.numberOfTaskSlots must be at least 1, got {slots_per_taskmanager}.")
    return taskmanagers, slots_per_taskmanager


def build_physical_graph(
    execution_graph: ExecutionGraph, taskmanagers: int | None = None, slots_per_taskmanager: int | None = None
) -> PhysicalGraph:
    """Share slots among the subtasks of ``execution_graph``, place the slots on
    ``taskmanagers`` TaskManagers of ``slots_per_taskmanager`` slots (defaults: a local
    environment's cluster, :func:`local_cluster`) and wire partitions, gates and channels."""
    taskmanagers, slots_per_taskmanager = local_cluster(execution_graph, taskmanagers, slots_per_taskmanager)
    groups = _slot_sharing_groups(execution_graph)
    slots, slot_of = _share_slots(execution_graph)
    regions = _sequential_regions(execution_graph, slot_of)
    # Position of each slot in the cluster: its opening order, or, when regions run one after
    # another, its opening order within the first region using it (later regions reuse slots).
    positions = {slot.index: slot.index for slot in slots}
    if regions:
        positions = {}
        for region in regions:
            for place, opened in enumerate(dict.fromkeys(region)):
                positions.setdefault(opened, place)
    needed = max((len(set(region)) for region in regions), default=len(slots))
    error = None
    if needed > taskmanagers * slots_per_taskmanager:
        error = NOT_ENOUGH_SLOTS
    else:
        for slot in slots:
            slot.taskmanager, slot.slot_index = divmod(positions[slot.index], slots_per_taskmanager)
    tasks = _wire(execution_graph, slots, slot_of)
    return PhysicalGraph(
        job_name=execution_graph.job_name,
        taskmanagers=taskmanagers,
        slots_per_taskmanager=slots_per_taskmanager,
        groups=groups,
        slots=slots,
        tasks=tasks,
        slots_needed=needed,
        vertex_names={vertex.id: vertex.name for vertex in execution_graph.vertices.values()},
        sequential_regions=len(regions),
        error=error,
    )


def _group_key(vertex: ExecutionJobVertex) -> int:
    # Flink's SlotSharingGroup objects: one per named group, and in BATCH one default group
    # per pipelined region, which the JobGraph numbers.
    return vertex.job_vertex.slot_sharing_group_index


def _slot_sharing_groups(graph: ExecutionGraph) -> list[SlotSharingGroupDemand]:
    members: dict[int, list[ExecutionJobVertex]] = {}
    for vertex in graph.vertices.values():
        members.setdefault(_group_key(vertex), []).append(vertex)
    return [
        SlotSharingGroupDemand(
            name=vertices[0].job_vertex.slot_sharing_group,
            vertices=tuple(vertex.id for vertex in vertices),
            slots=max(vertex.parallelism for vertex in vertices),
        )
        for vertices in members.values()
    ]


def _sequential_regions(graph: ExecutionGraph, slot_of: dict[_Subtask, int]) -> list[list[int]]:
    """With blocking exchanges, the slots of each pipelined region (subtasks joined by
    pipelined channels), regions in topological order: Flink schedules a region when its
    inputs are finished, in slots earlier regions freed. Without blocking exchanges, none:
    every region is scheduled at once."""
    blocking = {
        result.id
        for vertex in graph.vertices.values()
        for result in vertex.produced_results
        if result.result_partition_type.startswith("BLOCKING")
    }
    if not blocking:
        return []
    parent: dict[_Subtask, _Subtask] = {}

    def root(subtask: _Subtask) -> _Subtask:
        while parent.setdefault(subtask, subtask) != subtask:
            parent[subtask] = parent[parent[subtask]]
            subtask = parent[subtask]
        return subtask

    for vertex in graph.vertices.values():
        for subtask in vertex.subtasks:
            own = root((vertex.id, subtask.index))
            for edge in subtask.inputs:
                if edge.result_id not in blocking:
                    for partition in edge.partitions:
                        parent[root((edge.source_vertex, partition))] = own
    regions: dict[_Subtask, list[int]] = {}
    for member, slot in slot_of.items():
        regions.setdefault(root(member), []).append(slot)
    return list(regions.values())


def _share_slots(graph: ExecutionGraph) -> tuple[list[Slot], dict[_Subtask, int]]:
    """Flink's ``LocalInputPreferredSlotSharingStrategy``: the shared slots in the order they
    were opened, and each subtask's slot."""
    slots: list[Slot] = []
    slot_of: dict[_Subtask, int] = {}
    # Per job vertex: the slots of its group still without one of its subtasks, oldest first.
    available: dict[str, dict[int, None]] = {}
    # Per consumed partition group (consumer vertex, input, partitions read): candidate slots.
    candidates: dict[tuple[str, int, tuple[int, ...]], dict[int, None]] = {}
    members: dict[int, list[str]] = {}
    for vertex in graph.vertices.values():
        members.setdefault(_group_key(vertex), []).append(vertex.id)

    def take(slot: int, vertex_id: str, index: int) -> None:
        slots[slot].tasks.append((vertex_id, index))
        slot_of[(vertex_id, index)] = slot
        available.get(vertex_id, {}).pop(slot, None)

    for vertex in graph.vertices.values():
        group = _group_key(vertex)
        remaining = []
        for subtask in vertex.subtasks:
            chosen = None
            for number, edge in enumerate(subtask.inputs):
                key = (vertex.id, number, tuple(edge.partitions))
                if key not in candidates:
                    producer = graph.vertex(edge.source_vertex)
                    same_group = _group_key(producer) == group
                    candidates[key] = (
                        dict.fromkeys(slot_of[(producer.id, partition)] for partition in edge.partitions)
                        if same_group
                        else {}
                    )
                offered = candidates[key]
                while offered and chosen is None:
                    slot = next(iter(offered))
                    del offered[slot]
                    if slot in available.get(vertex.id, {}):
                        chosen = slot
                if chosen is not None:
                    break
            if chosen is None:
                remaining.append(subtask.index)
            else:
                take(chosen, vertex.id, subtask.index)
        for index in remaining:
            free = available.get(vertex.id)
            if free:
                slot = next(iter(free))
            else:
                slot = len(slots)
                slots.append(
                    Slot(index=slot, group=vertex.job_vertex.slot_sharing_group, taskmanager=None, slot_index=None)
                )
                for member in members[group]:
                    available.setdefault(member, {})[slot] = None
            take(slot, vertex.id, index)
    return slots, slot_of


def _wire(graph: ExecutionGraph, slots: list[Slot], slot_of: dict[_Subtask, int]) -> dict[_Subtask, PhysicalTask]:
    tasks = {
        (vertex.id, subtask.index): PhysicalTask(
            vertex_id=vertex.id, index=subtask.index, name=subtask.name, slot=slot_of[(vertex.id, subtask.index)]
        )
        for vertex in graph.vertices.values()
        for subtask in vertex.subtasks
    }
    # (result id, producer subtask) -> how many consumer subtasks read that partition.
    readers: dict[tuple[str, int], int] = {}
    consumer_of: dict[str, str] = {}
    for vertex in graph.vertices.values():
        for subtask in vertex.subtasks:
            task = tasks[(vertex.id, subtask.index)]
            consumer_tm = slots[task.slot].taskmanager
            for edge in subtask.inputs:
                consumer_of[edge.result_id] = vertex.id
                gate = InputGate(
                    source_vertex=edge.source_vertex, result_id=edge.result_id, ship_strategy=edge.ship_strategy
                )
                for partition in edge.partitions:
                    readers[(edge.result_id, partition)] = readers.get((edge.result_id, partition), 0) + 1
                    producer_tm = slots[slot_of[(edge.source_vertex, partition)]].taskmanager
                    if consumer_tm is None or producer_tm is None:
                        kind = ChannelKind.UNKNOWN
                    else:
                        kind = ChannelKind.LOCAL if producer_tm == consumer_tm else ChannelKind.REMOTE
                    gate.channels.append(InputChannel(partition, edge.subpartitions, kind))
                task.gates.append(gate)
    for vertex in graph.vertices.values():
        for result in vertex.produced_results:
            for index in range(vertex.parallelism):
                tasks[(vertex.id, index)].partitions.append(
                    ResultPartition(
                        result_id=result.id,
                        consumer_vertex=consumer_of[result.id],
                        partition_type=result.result_partition_type,
                        subpartitions=readers[(result.id, index)],
                    )
                )
    return tasks
