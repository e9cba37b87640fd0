"""The physical graph: the ExecutionGraph deployed onto TaskManagers and their slots.

Plain data built by the compile pass ``physical_graph_builder``. Each TaskManager offers a fixed number
of slots; subtasks of one slot sharing group share a slot (at most one subtask of each job
vertex per slot), so a job needs, per slot sharing group, as many slots as the group's
highest parallelism. Each task writes one ResultPartition per produced result, with one
ResultSubpartition per consumer subtask reading it, and reads through one InputGate per
input, with one InputChannel per producer partition it reads. A channel is local when
producer and consumer run in the same TaskManager, remote (over the network) otherwise.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ChannelKind",
    "InputChannel",
    "InputGate",
    "PhysicalGraph",
    "PhysicalTask",
    "ResultPartition",
    "Slot",
    "SlotSharingGroupDemand",
]

#: Flink's message when a job needs more slots than the cluster has (NoResourceAvailableException).
NOT_ENOUGH_SLOTS = "Could not acquire the minimum required resources."


class ChannelKind(enum.StrEnum):
    """How an InputChannel reaches its partition: Flink's Local/Remote/UnknownInputChannel."""

    LOCAL = "LOCAL"
    REMOTE = "REMOTE"
    #: The producer has no TaskManager (the job could not get its slots).
    UNKNOWN = "UNKNOWN"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class SlotSharingGroupDemand:
    """One slot sharing group: its job vertices and the slots it needs (their highest parallelism)."""

    name: str
    vertices: tuple[str, ...]
    slots: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "vertices": list(self.vertices), "slots": self.slots}


@dataclass(eq=False, slots=True)
class ResultPartition:
    """What one task writes for one produced result: one subpartition per consumer subtask reading it."""

    result_id: str
    consumer_vertex: str
    partition_type: str
    subpartitions: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "result": self.result_id,
            "consumer_vertex": self.consumer_vertex,
            "partition_type": self.partition_type,
            "subpartitions": self.subpartitions,
        }


@dataclass(eq=False, slots=True)
class InputChannel:
    """One producer partition a task reads: the producer subtask, the subpartitions read in it,
    and whether the data stays in the TaskManager."""

    producer_subtask: int
    subpartitions: tuple[int, int]
    kind: ChannelKind

    def to_dict(self) -> dict[str, Any]:
        return {
            "producer_subtask": self.producer_subtask,
            "subpartitions": list(self.subpartitions),
            "kind": str(self.kind),
        }


@dataclass(eq=False, slots=True)
class InputGate:
    """One input of a task: a channel per producer partition it reads."""

    source_vertex: str
    result_id: str
    ship_strategy: str
    channels: list[InputChannel] = field(default_factory=list)

    def count(self, kind: ChannelKind) -> int:
        return sum(1 for channel in self.channels if channel.kind is kind)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source_vertex": self.source_vertex,
            "result": self.result_id,
            "ship_strategy": self.ship_strategy,
            "channels": [channel.to_dict() for channel in self.channels],
        }


@dataclass(eq=False, slots=True)
class PhysicalTask:
    """One subtask deployed as a Task: its slot, partitions and gates."""

    vertex_id: str
    index: int
    name: str
    #: Index into :attr:`PhysicalGraph.slots`.
    slot: int
    partitions: list[ResultPartition] = field(default_factory=list)
    gates: list[InputGate] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "vertex": self.vertex_id,
            "index": self.index,
            "name": self.name,
            "slot": self.slot,
            "partitions": [partition.to_dict() for partition in self.partitions],
            "gates": [gate.to_dict() for gate in self.gates],
        }


@dataclass(eq=False, slots=True)
class Slot:
    """One shared slot (Flink's ExecutionSlotSharingGroup given a physical slot).

    ``taskmanager`` and ``slot_index`` say where it is (0-based); both are ``None`` when the
    cluster has too few slots for the job.
    """

    index: int
    group: str
    taskmanager: int | None
    slot_index: int | None
    #: (vertex id, subtask index) of the subtasks it holds, in deployment order.
    tasks: list[tuple[str, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "group": self.group,
            "taskmanager": self.taskmanager,
            "slot_index": self.slot_index,
            "tasks": [[vertex, index] for vertex, index in self.tasks],
        }


@dataclass(eq=False)
class PhysicalGraph:
    """The physical graph of one job on ``taskmanagers`` TaskManagers of
    ``slots_per_taskmanager`` slots each.

    ``error`` is Flink's message when the cluster has fewer slots than the job needs; the
    slots are then shared as Flink would share them but placed nowhere.
    """

    job_name: str
    taskmanagers: int
    slots_per_taskmanager: int
    groups: list[SlotSharingGroupDemand]
    slots: list[Slot]
    #: (vertex id, subtask index) -> task, in topological order.
    tasks: dict[tuple[str, int], PhysicalTask]
    #: The slots the job needs at once: the sum over slot sharing groups of each group's
    #: highest parallelism, or with blocking exchanges (BATCH) its largest pipelined region's.
    slots_needed: int
    #: Job vertex id -> its name, in topological order.
    vertex_names: dict[str, str] = field(default_factory=dict)
    #: With blocking exchanges, how many pipelined regions run one after another (else 0).
    sequential_regions: int = 0
    error: str | None = None

    @property
    def slots_available(self) -> int:
        return self.taskmanagers * self.slots_per_taskmanager

    def task(self, vertex_id: str, index: int) -> PhysicalTask:
        return self.tasks[(vertex_id, index)]

    def taskmanager_of(self, task: PhysicalTask) -> int | None:
        return self.slots[task.slot].taskmanager

    def channel_counts(self) -> dict[str, int]:
        """How many InputChannels of the job are local, remote or unknown."""
        counts = dict.fromkeys((str(kind) for kind in ChannelKind), 0)
        for task in self.tasks.values():
            for gate in task.gates:
                for channel in gate.channels:
                    counts[str(channel.kind)] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_name": self.job_name,
            "taskmanagers": self.taskmanagers,
            "slots_per_taskmanager": self.slots_per_taskmanager,
            "slots_needed": self.slots_needed,
            "sequential_regions": self.sequential_regions,
            "error": self.error,
            "groups": [group.to_dict() for group in self.groups],
            "slots": [slot.to_dict() for slot in self.slots],
            "tasks": [task.to_dict() for task in self.tasks.values()],
        }

    def __repr__(self) -> str:
        where = f"{self.taskmanagers} TaskManagers x {self.slots_per_taskmanager} slots"
        state = f", {self.error}" if self.error else ""
        return (
            f"PhysicalGraph({self.job_name!r}, {len(self.tasks)} tasks in {self.slots_needed} slots on {where}{state})"
        )
