"""Flink's MultipleInputNodeCreationProcessor (batch): which ExecNodes it groups into multiple
input operators, which table sources it translates first as it decides, and the MultipleInput
ExecNode that replaces each group.

Flink asks of a group's entrance whether its input is a chainable (FLIP-27) source by
translating that source (``isChainableSource`` calls ``translateToPlan``, which caches the
transformation), so those sources take transformation ids before the rest of the plan is
translated, in the order the processor visits them: from the sources towards the sinks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from flowmagic.sql import tree
from flowmagic.sql.exec_nodes import ExecNode, InputProperty

__all__ = ["MultipleInputExecNode", "MultipleInputGroup", "fuse_multiple_inputs", "multiple_input_groups"]

_EXCHANGE = "exchange"
_UNION = "union"
_SCAN = "table-source-scan"


def _short(node: ExecNode) -> str:
    return node.type.split("-exec-", 1)[1].rsplit("_", 1)[0]


@dataclass(eq=False)
class _Wrapper:
    node: ExecNode
    inputs: list[_Wrapper] = field(default_factory=list)
    outputs: list[_Wrapper] = field(default_factory=list)
    group: MultipleInputGroup | None = None


@dataclass(eq=False)
class MultipleInputGroup:
    """The ExecNodes (``members``, the root first) Flink fuses into one multiple input operator."""

    root: _Wrapper | None
    members: list[_Wrapper] = field(default_factory=list)

    def add(self, wrapper: _Wrapper) -> None:
        self.members.append(wrapper)
        wrapper.group = self

    def remove(self, wrapper: _Wrapper) -> None:
        if wrapper is self.root:
            self.remove_root()
        else:
            self.members.remove(wrapper)
            wrapper.group = None

    def remove_root(self) -> None:
        root = self.root
        assert root is not None
        same_group = [w for w in root.inputs if w in self.members]
        self.members.remove(root)
        root.group = None
        self.root = same_group[0] if same_group else None

    @property
    def nodes(self) -> list[ExecNode]:
        return [w.node for w in self.members]


def _wrap(root: ExecNode) -> _Wrapper:
    wrappers: dict[int, _Wrapper] = {}
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        wrapper = wrappers.setdefault(id(node), _Wrapper(node))
        for child in node.inputs:
            child_wrapper = wrappers.setdefault(id(child), _Wrapper(child))
            wrapper.inputs.append(child_wrapper)
            child_wrapper.outputs.append(wrapper)
        stack.extend(reversed(node.inputs))
    return wrappers[id(root)]


def _topological(root: _Wrapper) -> list[_Wrapper]:
    """Sinks first, sources last: a node once all its outputs were visited."""
    result = []
    queue = deque([root])
    visits: dict[int, int] = {}
    while queue:
        wrapper = queue.popleft()
        result.append(wrapper)
        for child in wrapper.inputs:
            visits[id(child)] = visits.get(id(child), 0) + 1
            if visits[id(child)] == len(child.outputs):
                queue.append(child)
    return result


def _create_groups(ordered: list[_Wrapper]) -> None:
    for wrapper in ordered:
        if not wrapper.inputs or _short(wrapper.node) == _EXCHANGE:
            continue  # sources and exchanges are never members
        groups = {id(o.group) for o in wrapper.outputs}
        first = wrapper.outputs[0].group if wrapper.outputs else None
        if first is not None and len(groups) == 1:
            first.add(wrapper)
        elif len(wrapper.inputs) >= 2:
            # One-input operators chain as operator chains; only a node of two inputs roots a group.
            group = MultipleInputGroup(wrapper)
            group.add(wrapper)


def _entrance(wrapper: _Wrapper) -> bool:
    return all(i.group is not wrapper.group for i in wrapper.inputs)


def _same_group_inputs(wrapper: _Wrapper, group: MultipleInputGroup) -> list[_Wrapper]:
    found = []
    queue = deque([wrapper])
    visited = {id(wrapper)}
    while queue:
        current = queue.popleft()
        if current.group is not group:
            continue
        found.append(current)
        for child in current.inputs:
            if id(child) not in visited:
                visited.add(id(child))
                queue.append(child)
    return found


def _optimize(ordered: list[_Wrapper], chainable: Callable[[ExecNode], bool]) -> None:
    def chainable_source(wrapper: _Wrapper) -> bool:
        return _short(wrapper.node) == _SCAN and chainable(wrapper.node)

    for wrapper in reversed(ordered):  # from the sources towards the sinks
        group = wrapper.group
        if group is None or not _entrance(wrapper):
            continue
        remove = False
        if _short(wrapper.node) == _UNION:
            # A union ends a group only next to a FLIP-27 source (Flink's any() stops at the first).
            remove = not any(chainable_source(i) for i in wrapper.inputs)
        elif len(wrapper.inputs) == 1:
            only = wrapper.inputs[0]
            remove = _short(only.node) != _EXCHANGE and not chainable_source(only)
        remove |= any(
            _short(i.node) == _EXCHANGE and i.node.input_properties[0].distribution == "SINGLETON"
            for i in wrapper.inputs
        )
        if remove:
            group.remove(wrapper)

    for wrapper in ordered:  # from the sinks towards the sources
        group = wrapper.group
        if group is None or wrapper is not group.root:
            continue
        union = _short(wrapper.node) == _UNION
        if len(group.members) == 1:
            # Kept alone only to chain a FLIP-27 source, which a union (no operator) cannot.
            if union or not any(chainable_source(i) for i in wrapper.inputs):
                group.remove_root()
            continue
        if union:
            # A union at a group's output is worth keeping over two inputs that join or aggregate.
            branches = [_same_group_inputs(i, group) for i in wrapper.inputs]
            useless = [
                branch
                for branch in branches
                if not any(len(w.inputs) >= 2 and _short(w.node) != _UNION for w in branch)
            ]
            if len(branches) - len(useless) < 2:
                for branch in useless:
                    for member in branch:
                        if member.group is not None:
                            member.group.remove(member)
                group.remove_root()
        elif len(wrapper.inputs) == 1:
            group.remove_root()


def multiple_input_groups(root: ExecNode, chainable: Callable[[ExecNode], bool]) -> list[MultipleInputGroup]:
    """The multiple input groups of the batch ExecNode graph under ``root``, roots first in
    topological order. ``chainable(scan)`` translates a table source scan (as Flink does to
    ask) and says whether it became a FLIP-27 SourceTransformation."""
    ordered = _topological(_wrap(root))
    _create_groups(ordered)
    _optimize(ordered, chainable)
    groups: list[MultipleInputGroup] = []
    for wrapper in ordered:
        group = wrapper.group
        if group is not None and group.root is wrapper and group not in groups:
            groups.append(group)
    return groups


@dataclass(eq=False)
class MultipleInputExecNode(ExecNode):
    """Flink's BatchExecMultipleInput: the ``members`` of a group (``root`` first) run as one
    operator; its ``inputs`` are the members' inputs from outside the group."""

    root: ExecNode | None = None
    members: list[ExecNode] = field(default_factory=list)


def _read_priorities(path: list[tuple[ExecNode, int]]) -> tuple[int, ...]:
    # Flink's InputOrderCalculator: a hash join reads its build side before its probe side.
    priorities = []
    for member, index in path:
        build = getattr(member.physical, "build", None)
        if build is not None and len(member.inputs) == 2:
            priorities.append(0 if index == (0 if build == "left" else 1) else 1)
    return tuple(priorities)


def _multiple_input_node(group: MultipleInputGroup, node_id: int) -> MultipleInputExecNode:
    assert group.root is not None
    root = group.root.node
    members = [root, *(m for m in group.nodes if m is not root)]
    member_ids = {id(m) for m in members}
    # Inputs in Flink's createMultipleInputNode order: member by member, each one's outside inputs.
    inputs: list[tuple[ExecNode, ExecNode, int]] = [
        (member, child, index)
        for member in members
        for index, child in enumerate(member.inputs)
        if id(child) not in member_ids
    ]
    numbers = {(id(member), index): n for n, (member, _, index) in enumerate(inputs, start=1)}
    parents: dict[int, tuple[ExecNode, int]] = {
        id(child): (member, index) for member in members for index, child in enumerate(member.inputs)
    }

    def path(member: ExecNode, index: int) -> list[tuple[ExecNode, int]]:
        steps = [(member, index)]
        while id(steps[-1][0]) in parents and steps[-1][0] is not root:
            steps.append(parents[id(steps[-1][0])])
        return list(reversed(steps))

    priorities = [_read_priorities(path(member, index)) for member, _, index in inputs]
    ranks = {p: rank for rank, p in enumerate(sorted(set(priorities)))}
    read_order = ",".join(str(ranks[p]) for p in priorities)

    def line(item: tuple[ExecNode, ExecNode, int]) -> str:
        parent, node, index = item
        if id(node) in member_ids:
            return node.description
        return f"[#{numbers[(id(parent), index)]}] {node.description}"

    def children(item: tuple[ExecNode, ExecNode, int]) -> list[tuple[ExecNode, ExecNode, int]]:
        _, node, _ = item
        if id(node) not in member_ids:
            return []
        return [(node, child, index) for index, child in enumerate(node.inputs)]

    # Flink's getMultipleInputDescription: the members' tree, its line breaks escaped.
    text = tree.render((root, root, -1), line, children).replace("\n", "\\n")
    return MultipleInputExecNode(
        id=node_id,
        type="batch-exec-multiple-input_1",
        name="MultipleInput",
        description=f"MultipleInput(readOrder=[{read_order}], members=[\\n{text}\\n])",
        fields=list(root.fields),
        inputs=[child for _, child, _ in inputs],
        input_properties=[InputProperty() for _ in inputs],
        root=root,
        members=members,
    )


def fuse_multiple_inputs(root: ExecNode, chainable: Callable[[ExecNode], bool], next_id: int) -> tuple[ExecNode, int]:
    """Replace each multiple input group of the batch graph under ``root`` by one
    MultipleInput ExecNode numbered from ``next_id`` on (Flink's MultipleInputNodeCreationProcessor);
    the graph's new root and the last id taken."""
    for group in multiple_input_groups(root, chainable):
        assert group.root is not None
        next_id += 1
        fused = _multiple_input_node(group, next_id)
        for consumer in group.root.outputs:
            consumer.node.inputs = [fused if i is group.root.node else i for i in consumer.node.inputs]
        if group.root.node is root:
            root = fused
    return root, next_id
