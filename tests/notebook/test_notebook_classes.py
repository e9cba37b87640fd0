"""Records of classes defined in a notebook (dataclasses, namedtuples, plain classes) cross
exchanges, live in keyed state, print and come back to the driver, on both executors.

A notebook cell's classes belong to ``__main__`` of the kernel, which Spark's Python workers
do not have: pickled by reference, such records cannot be read (or, on a worker, written)
anywhere but on the driver.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

CELL = """
from collections import namedtuple
from dataclasses import dataclass

import flowmagic
from flowmagic.datastream.functions import KeyedProcessFunction
from flowmagic.datastream.state import ValueStateDescriptor


@dataclass(frozen=True)
class Reading:
    sensor: str
    value: int


Total = namedtuple("Total", "sensor total")


class Report:
    def __init__(self, sensor, total, previous):
        self.sensor, self.total, self.previous = sensor, total, previous

    def __eq__(self, other):
        return isinstance(other, Report) and vars(self) == vars(other)

    def __repr__(self):
        return f"Report({self.sensor}, {self.total}, previous={self.previous})"


class RememberLast(KeyedProcessFunction):
    def open(self, runtime_context):
        self.last = runtime_context.get_state(ValueStateDescriptor("last"))

    def process_element(self, value, ctx):
        previous = self.last.value()
        self.last.update(value)
        yield Report(value.sensor, value.total, previous)


def program():
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    readings = env.from_collection([Reading("a", 1), Reading("b", 2), Reading("a", 3)])
    totals = (
        readings.map(lambda r: Total(r.sensor, r.value))
        .key_by(lambda t: t.sensor)
        .reduce(lambda x, y: Total(x.sensor, x.total + y.total))
    )
    reports = totals.rebalance().key_by(lambda t: t.sensor).process(RememberLast())
    reports.print()
    return env, reports
"""


@pytest.fixture
def cell(request: pytest.FixtureRequest) -> Iterator[types.ModuleType]:
    """The cell's module. On Spark it is ``__main__``, as in a notebook: the driver has it,
    the workers have a ``__main__`` of their own. Locally (one process) the cell is a module
    that was imported once and is gone, so that no one can find its classes by name."""
    name = "__main__" if request.param == "spark" else "notebook_cell"
    module = types.ModuleType(name)
    main = sys.modules.get("__main__")
    sys.modules[name] = module  # dataclasses look their module up while making the class
    exec(compile(CELL, "<notebook cell>", "exec"), module.__dict__)
    if name != "__main__":
        del sys.modules[name]
    try:
        yield module
    finally:
        if main is not None:
            sys.modules["__main__"] = main


@pytest.mark.parametrize(("executor", "cell"), [("local", "local"), ("spark", "spark")], indirect=["cell"])
def test_classes_of_a_cell_cross_exchanges_state_and_sinks(
    executor: str, cell: types.ModuleType, request: pytest.FixtureRequest
) -> None:
    if executor == "spark":
        request.getfixturevalue("spark")
    env, reports = cell.program()
    Report, Total = cell.Report, cell.Total
    expected = [
        Report("a", 1, None),
        Report("a", 4, Total("a", 1)),
        Report("b", 2, None),
    ]
    collected = list(reports.execute_and_collect(executor=executor))
    # Equal to the driver's own instances: the classes came back as the driver's classes.
    assert sorted(collected, key=repr) == expected
    assert all(type(report) is Report for report in collected)
    printed = sorted(line.split("> ", 1)[1] for _stderr, line in env.execute(executor=executor).printed)
    assert printed == sorted(map(repr, expected))
