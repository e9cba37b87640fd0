"""Flink's batch ``MultipleInput``: several SQL operators (a hash join and the Calcs around it,
say) run as one, wired as the planner grouped them. Each member is the runtime operator of its
own kind; the MultipleInput hands its inputs to the members that read them and the root's
rows on. Members that wait for the end of their input (joins, sorts) run at the end, inputs
before consumers."""

from __future__ import annotations

from typing import Any

from flowmagic.graph.operator_params import SqlOperatorParams
from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.sql_runtime_ops import MultipleInputSpec
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.registry import implementation, register
from flowmagic.runtime.sql.operator import SqlOperator

__all__ = ["MultipleInput"]


def _feed(member: Operator, side: int) -> tuple[Any, Any]:
    """The record and batch targets that hand rows to ``member``'s input ``side``."""
    if side == 0:
        return (lambda value, timestamp: member.process(value, timestamp)), member.process_batch

    def batch(values: list[Any]) -> None:
        for value in values:
            member.process(value, None, side)

    return (lambda value, timestamp: member.process(value, timestamp, side)), batch


@register(OperatorKind.SQL_MULTIPLE_INPUT)
class MultipleInput(SqlOperator):
    def __init__(self, name: str, params: SqlOperatorParams, task: TaskInfo):
        super().__init__(name, params, task)
        spec = self.spec
        assert isinstance(spec, MultipleInputSpec)
        self.members: list[Operator] = []
        for member in spec.members:
            member_params = SqlOperatorParams(
                exec_node_id=params.exec_node_id,
                exec_type=member.kind,
                description=member.name,
                field_names=member.spec.field_names,
                runtime=member.spec,
            )
            self.members.append(implementation(OperatorKind(member.kind))(member.name or name, member_params, task))
        #: Per input side of the MultipleInput (1, 2, ...): the member and its side it feeds.
        self.entries: dict[int, tuple[Operator, int]] = {}
        for index, member in enumerate(spec.members):
            operator = self.members[index]
            two_inputs = len(member.inputs) > 1
            for position, (source, number) in enumerate(member.inputs):
                side = position + 1 if two_inputs else 0
                if source == "input":
                    self.entries[number + 1] = (operator, side)
                else:
                    record, batch = _feed(operator, side)
                    self.members[number].output.targets.append(record)
                    self.members[number].output.batch_targets.append(batch)
        root = self.members[-1]
        root.output.targets.append(lambda value, timestamp: self.output.collect(value, timestamp))
        root.output.batch_targets.append(lambda values: self.output.collect_batch(values))
        for member_operator in self.members:
            member_operator.output.seal()

    def open(self) -> None:
        super().open()
        for member in reversed(self.members):
            member.open()

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        member, member_side = self.entries[side]
        if member_side == 0:
            member.process_batch([value])
        else:
            member.process(value, timestamp, member_side)

    def end_input(self) -> None:
        for member in self.members:
            member.end_input()

    def close(self) -> None:
        for member in self.members:
            member.close()
        super().close()
