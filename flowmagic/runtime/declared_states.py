"""The keyed states a program's operators declare, learnt before the program runs.

Flink learns which states an operator has only when its tasks register them, so a savepoint
restored into an edited program whose state changed kind fails in a task, operator by
operator. A restore check wants all of them at once, before anything runs: each keyed
operator is made here as a task makes it, on a copy of its functions, and opened (Flink's
``RichFunction.open``), which is where PyFlink programs get their states; the states its
functions asked for are what it declares. A function that asks for a state only while it
processes records declares it then, and the task checks it then.

Opening runs the user's ``open()`` on the driver, once, with a runtime context of subtask 0
and an empty keyed state: an ``open()`` that cannot run there (it needs a file only the
executors have, say) is reported, not raised (:attr:`Declared.unknown`).
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass, field

from flowmagic.graph.operator_params import OperatorParams
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.plan import VertexPlan
from flowmagic.runtime.registry import implementation

__all__ = ["Declared", "declared_states"]


@dataclass(frozen=True)
class Declared:
    """The keyed states one operator declared when opened: name -> (Flink's state type, the
    type information's text or None). ``unknown`` says why they could not be learnt."""

    states: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    unknown: str | None = None


def declared_states(plans: dict[str, VertexPlan], operator_ids: dict[int, str]) -> dict[str, Declared]:
    """Per operator ID (``operator_ids``: stream node id -> hex ID), the keyed states of each
    keyed operator of ``plans``; operators without keyed state are left out."""
    declared: dict[str, Declared] = {}
    for plan in plans.values():
        info = TaskInfo(
            plan.name,
            0,
            plan.parallelism,
            plan.max_parallelism,
            0,
            plan.batch,
            job_parameters=dict(plan.job_parameters),
            auto_watermark_interval_ms=plan.auto_watermark_interval_ms,
            dialect=plan.dialect,
        )
        for node_id, node in plan.nodes.items():
            operator_id = operator_ids.get(node_id)
            if node.is_source or operator_id is None:
                continue
            kind = implementation(node.operator.kind)
            # Whether an operator is keyed can depend on its parameters (a process function's
            # on a KeyedStream); making one touches nothing, opening it runs the user's code.
            try:
                keyed = kind(node.name, node.operator.params, info).backend is not None
            except Exception:
                # Its tasks will fail making it, and say why; its states are checked there.
                continue
            if keyed:
                declared[operator_id] = _open(kind, node.name, node.operator.params, info)
    return declared


def _open(kind: type, name: str, params: OperatorParams, info: TaskInfo) -> Declared:
    try:
        # A copy: opening binds states to the functions, which the job then ships as they are.
        copied = copy.deepcopy(params)
    except Exception as error:
        return Declared(unknown=f"its functions cannot be copied to open them ({type(error).__name__}: {error})")
    operator = kind(name, copied, info)
    try:
        operator.open()
    except Exception as error:
        cause = error.__cause__ if error.__cause__ is not None else error
        return Declared(unknown=f"its open() raised {type(cause).__name__}: {cause}")
    states = dict(operator.backend.declared) if operator.backend is not None else {}
    # What open() declared is known; a close() that fails matters to the job only.
    with contextlib.suppress(Exception):
        operator.close()
    return Declared(states)
