"""The physical graph as it ran on Spark: where each subtask ran, and what its channels carried.

Plain data, built from the live monitor's snapshot by the job view and drawn by
:func:`flowmagic.render.spark_placement_to_dot`. Flink deploys a subtask into a slot of a
TaskManager for the job's life; Spark runs each vertex's subtasks as the tasks of a stage,
wherever an executor has a free core, in a Python worker process of that executor. Every
flowmagic exchange between two vertices is a Spark shuffle (the producer task writes it, the
consumer task fetches it); operators chained into one task call each other in that task.
A channel is :attr:`ChannelKind.LOCAL` on Spark when its producer and consumer ran in the
same process, :attr:`ChannelKind.REMOTE` when they ran in different processes (which
``crosses_executor`` tells apart from different executors, over the network), and
:attr:`ChannelKind.UNKNOWN` until both have reported where they run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from flowmagic.graph.physical_graph import ChannelKind, PhysicalGraph

__all__ = ["DIFFERENCE_FROM_FLINK", "SparkChannel", "SparkPlacement", "SparkSubtask", "place_on_spark"]

#: One sentence on what differs from Flink, shown with the picture.
DIFFERENCE_FROM_FLINK = (
    "Flink deploys each subtask into a slot of a TaskManager for the job's life; Spark runs a "
    "vertex's subtasks as the tasks of a stage, wherever an executor has a free core, and "
    "flowmagic's exchanges are Spark shuffles (written by one task, fetched by the next) or, "
    "within a chain, calls inside one task."
)


@dataclass(frozen=True, slots=True)
class SparkSubtask:
    """Where one subtask's latest attempt ran on Spark, and the records it handed on.

    ``executor`` is Spark's executor id (``"driver"`` in local mode), ``process`` the Python
    worker as ``host:pid``; both are ``None`` until known. ``channels`` counts the records
    handed to each consumer subtask, by ``(consumer vertex id, subtask)``.
    """

    vertex_id: str
    index: int
    attempt: int
    executor: str | None = None
    process: str | None = None
    stage: int | None = None
    task: int | None = None
    channels: dict[tuple[str, int], int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "vertex": self.vertex_id,
            "index": self.index,
            "attempt": self.attempt,
            "executor": self.executor,
            "process": self.process,
            "stage": self.stage,
            "task": self.task,
        }


@dataclass(frozen=True, slots=True)
class SparkChannel:
    """One InputChannel of the physical graph, as Flink would and Spark did carry it."""

    producer: tuple[str, int]
    consumer: tuple[str, int]
    ship_strategy: str
    #: Local or remote on the Flink cluster the physical graph was deployed on.
    flink: ChannelKind
    #: Local (same process) or remote (another process) on Spark, or unknown.
    spark: ChannelKind
    #: Whether producer and consumer ran in different executors (None: unknown).
    crosses_executor: bool | None
    #: Records the producer handed the consumer (None: the producer did not report).
    records: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "producer": list(self.producer),
            "consumer": list(self.consumer),
            "ship_strategy": self.ship_strategy,
            "flink": str(self.flink),
            "spark": str(self.spark),
            "crosses_executor": self.crosses_executor,
            "records": self.records,
        }


@dataclass(eq=False)
class SparkPlacement:
    """A physical graph's subtasks with where they ran on Spark, and its channels."""

    graph: PhysicalGraph
    subtasks: dict[tuple[str, int], SparkSubtask]
    channels: list[SparkChannel]

    @property
    def executors(self) -> list[str]:
        """The executors that ran subtasks, in order of first appearance."""
        return list(dict.fromkeys(s.executor for s in self.subtasks.values() if s.executor is not None))

    def channel_counts(self) -> dict[str, int]:
        """How many channels were local, remote or unknown on Spark (``"LOCAL"``...), and how
        many crossed executors (``"CROSS_EXECUTOR"``)."""
        counts = dict.fromkeys((str(kind) for kind in ChannelKind), 0)
        for channel in self.channels:
            counts[str(channel.spark)] += 1
        counts["CROSS_EXECUTOR"] = sum(1 for channel in self.channels if channel.crosses_executor)
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_name": self.graph.job_name,
            "subtasks": [subtask.to_dict() for subtask in self.subtasks.values()],
            "channels": [channel.to_dict() for channel in self.channels],
        }


def place_on_spark(graph: PhysicalGraph, subtasks: Iterable[SparkSubtask]) -> SparkPlacement:
    """``graph``'s channels classified by where their ends ran on Spark (``subtasks``;
    subtasks not given ran nowhere yet)."""
    placed = {(subtask.vertex_id, subtask.index): subtask for subtask in subtasks}
    channels = []
    for task in graph.tasks.values():
        consumer = (task.vertex_id, task.index)
        for gate in task.gates:
            for channel in gate.channels:
                producer = (gate.source_vertex, channel.producer_subtask)
                tail, head = placed.get(producer), placed.get(consumer)
                channels.append(
                    SparkChannel(
                        producer,
                        consumer,
                        gate.ship_strategy,
                        channel.kind,
                        _kind(tail, head),
                        _crosses(tail, head),
                        None if tail is None else tail.channels.get(consumer, 0),
                    )
                )
    ordered = {key: placed[key] for key in graph.tasks if key in placed}
    return SparkPlacement(graph, ordered, channels)


def _kind(tail: SparkSubtask | None, head: SparkSubtask | None) -> ChannelKind:
    if tail is None or head is None or tail.process is None or head.process is None:
        return ChannelKind.UNKNOWN
    return ChannelKind.LOCAL if tail.process == head.process else ChannelKind.REMOTE


def _crosses(tail: SparkSubtask | None, head: SparkSubtask | None) -> bool | None:
    if tail is None or head is None or tail.executor is None or head.executor is None:
        return None
    return tail.executor != head.executor
