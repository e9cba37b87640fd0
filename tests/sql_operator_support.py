"""A SQL operator of a real query's plan, run on its own: rows fed at processing times set on
its clock, its output collected, its state snapshotted and restored (pickled)."""

from __future__ import annotations

import pickle
from typing import Any

from flowmagic.graph.operators import OperatorKind
from flowmagic.graph.transformations import Transformation
from flowmagic.runtime.clock import EpochClock
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.registry import implementation
from flowmagic.table import EnvironmentSettings, TableEnvironment

__all__ = ["SqlOperatorUnderTest"]


class SqlOperatorUnderTest:
    """The operator of ``kind`` in the plan of ``query`` (after the ``setup`` statements, with
    ``options`` set), its output collected, its processing time at ``clock.time``."""

    def __init__(self, setup: list[str], query: str, kind: OperatorKind, **options: str):
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        t_env.get_config().set("parallelism.default", "1")
        for key, value in options.items():
            t_env.get_config().set(key, value)
        for statement in setup:
            t_env.execute_sql(statement)
        found: list[Transformation] = []
        seen: set[int] = set()

        def visit(t: Transformation) -> None:
            if t.id not in seen:
                seen.add(t.id)
                for child in t.inputs:
                    visit(child)
                operator = getattr(t, "operator", None)
                if operator is not None and operator.kind == kind:
                    found.append(t)

        visit(t_env.session.translate(query).translation.sink)
        (self.transformation,) = found
        self.clock = EpochClock(0)
        self.out: list[tuple[Any, ...]] = []
        self.operator = self._make()

    def _make(self) -> Operator:
        t = self.transformation
        spec = t.operator  # type: ignore[attr-defined]
        task = TaskInfo("test", 0, 1, 128, 0, batch=False, clock=self.clock)
        operator = implementation(spec.kind)(t.name, spec.params, task)
        operator.output.targets.append(lambda value, ts: self.out.append(value))
        operator.output.batch_targets.append(self.out.extend)
        operator.output.seal()
        operator.open()
        return operator

    def feed(self, at_ms: int, row: tuple[Any, ...], side: int = 0) -> list[tuple[Any, ...]]:
        """What the operator emits for ``row`` arriving at processing time ``at_ms``."""
        self.clock.time = at_ms
        self.out.clear()
        self.operator.process(row, None, side)
        return list(self.out)

    def advance(self, at_ms: int) -> list[tuple[Any, ...]]:
        """What the operator emits when processing time reaches ``at_ms`` (its timers)."""
        self.clock.time = at_ms
        self.out.clear()
        self.operator.advance_processing_time(at_ms)
        return list(self.out)

    def restored(self, at_ms: int) -> None:
        """The operator replaced by one restored from its snapshot (pickled) taken at ``at_ms``."""
        self.clock.time = at_ms
        self.operator.prepare_snapshot(True)
        snapshot = pickle.loads(pickle.dumps(self.operator.snapshot_keyed()))
        self.operator = self._make()
        self.operator.restore_keyed(snapshot)
