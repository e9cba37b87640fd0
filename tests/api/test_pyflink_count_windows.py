"""PyFlink programs' count windows print what PyFlink 2.3.0 printed (``pyflink_programs/
count_window*.py`` and, in ``expected/``, their output), on the local executor and on Spark;
flowmagic's own API keeps Java Flink's count windows."""

from __future__ import annotations

import contextlib
import functools
import io
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from conformance_support import CONFORMANCE

import flowmagic
import flowmagic.datastream
from flowmagic.errors import InvalidArgumentError
from flowmagic.graph.operators import OperatorKind
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.runtime.plan import build_plans
from flowmagic.runtime.registry import implementation
from flowmagic.vocabulary.windows import (
    CountSlidingWindowAssigner,
    CountTumblingWindowAssigner,
    CountWindow,
    GlobalWindows,
)

PROGRAMS = CONFORMANCE / "pyflink_programs"
COUNT_WINDOW_PROGRAMS = sorted(PROGRAMS.glob("count_window*.py"))


def _run(program: Path, executor: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """What ``program`` printed, run as a script (``__main__``) on ``executor``."""
    execute = flowmagic.datastream.StreamExecutionEnvironment.execute
    monkeypatch.setattr(
        flowmagic.datastream.StreamExecutionEnvironment, "execute", functools.partialmethod(execute, executor=executor)
    )
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(program.read_text(), str(program), "exec"), {"__name__": "__main__"})
    return printed.getvalue()


def _by_job_and_subtask(printed: str) -> dict[tuple[str, str], list[str]]:
    """The lines of each job (after its ``-- title`` line), in order per subtask prefix
    (``1> ``): PyFlink's subtasks print concurrently, so only each one's order is fixed."""
    lines: dict[tuple[str, str], list[str]] = defaultdict(list)
    job = ""
    for line in printed.splitlines():
        if line.startswith("-- "):
            job = line
            lines[(job, "")] = []
            continue
        prefix, separator, _rest = line.partition("> ")
        subtask = prefix if separator and prefix.isdigit() else ""
        lines[(job, subtask)].append(line)
    return dict(lines)


@pytest.mark.parametrize("executor", ["local", "spark"])
@pytest.mark.parametrize("program", COUNT_WINDOW_PROGRAMS, ids=lambda path: path.stem)
def test_count_windows_print_what_pyflink_printed(
    program: Path, executor: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    if executor == "spark":
        request.getfixturevalue("spark")
    expected = (PROGRAMS / "expected" / f"{program.stem}.txt").read_text()
    assert _by_job_and_subtask(_run(program, executor, monkeypatch)) == _by_job_and_subtask(expected)


def _windows_seen(env: Any, size: int, slide: int | None) -> list[tuple[str, Any, list[int]]]:
    def describe(key: str, context: Any, elements: list[tuple[str, int]]) -> list[tuple[str, Any, list[int]]]:
        return [(key, context.window(), [n for _, n in elements])]

    rows = [("a", n) for n in range(1, 8)]
    stream = env.from_collection(rows).key_by(lambda row: row[0]).count_window(size, slide).process(describe)
    return list(stream.execute_and_collect(executor="local"))


def test_flowmagics_own_api_keeps_javas_count_windows() -> None:
    # Java's countWindow(3, 1): GlobalWindows, fired every element with the last three.
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    assert [elements for _key, _window, elements in _windows_seen(env, 3, 1)] == [
        [1], [1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6], [5, 6, 7],
    ]  # fmt: skip
    assert {str(window) for _key, window, _elements in _windows_seen(env, 3, None)} == {"GlobalWindow"}
    assert isinstance(env.from_collection([1]).key_by(lambda n: n).count_window(2)._assigner, GlobalWindows)


def test_a_pyflink_programs_count_windows_are_pyflinks() -> None:
    env = flowmagic.datastream.StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    # PyFlink's CountSlidingWindowAssigner(3, 1): a window fires once, when it holds three.
    assert _windows_seen(env, 3, 1) == [
        ("a", CountWindow(0), [1, 2, 3]),
        ("a", CountWindow(1), [2, 3, 4]),
        ("a", CountWindow(2), [3, 4, 5]),
        ("a", CountWindow(3), [4, 5, 6]),
        ("a", CountWindow(4), [5, 6, 7]),
    ]
    assert _windows_seen(env, 3, 0) == [("a", CountWindow(0), [1, 2, 3]), ("a", CountWindow(1), [4, 5, 6])]


def test_a_pyflink_count_window_is_drawn_as_pyflink_names_it() -> None:
    # The window vertex as PyFlink 2.3.0's execution plan showed it.
    env = flowmagic.datastream.StreamExecutionEnvironment.get_execution_environment()
    keyed = env.from_collection([("a", 1)]).key_by(lambda row: row[0])
    keyed.count_window(2).apply(_Sum()).print()
    keyed.count_window(3, 1).apply(_Sum()).print()
    windows = [node for node in json.loads(env.get_execution_plan())["nodes"] if "Window" in node["contents"]]
    assert [(node["type"], node["contents"]) for node in windows] == [
        ("CountTumblingWindowAssigner", "Window(CountTumblingWindowAssigner(2), CountTrigger, _Sum)"),
        ("CountSlidingWindowAssigner", "Window(CountSlidingWindowAssigner(3, 1), CountTrigger, _Sum)"),
    ]


class _Sum(flowmagic.datastream.WindowFunction):
    def apply(self, key: str, window: CountWindow, inputs: Any) -> list[tuple[str, int]]:
        return [(key, sum(n for _, n in inputs))]


def test_count_windows_as_pyflink_prints_compares_and_hashes_them() -> None:
    assert str(CountWindow(3)) == repr(CountWindow(3)) == "CountWindow(id=3)"
    assert CountWindow(3) == CountWindow(3) != CountWindow(4)
    # PyFlink 2.3.0: hash(CountWindow(3)), its long_to_int_with_bit_mixing of the id.
    assert hash(CountWindow(3)) == 1219537214460136996
    assert CountWindow(0).max_timestamp() == (1 << 63) - 1
    assert str(CountTumblingWindowAssigner.of(2)) == "CountTumblingWindowAssigner(2)"
    assert str(CountSlidingWindowAssigner.of(3, 1)) == "CountSlidingWindowAssigner(3, 1)"
    with pytest.raises(InvalidArgumentError, match="count window slide must be a positive int, got 0"):
        CountSlidingWindowAssigner.of(3, 0)


def test_a_count_window_that_can_take_no_more_elements_is_dropped() -> None:
    env = flowmagic.datastream.StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([("a", 1)]).key_by(lambda row: row[0]).count_window(2, 1).apply(_Sum())
    (params,) = [
        node.operator.params
        for plan in build_plans(env.get_execution_graph()).values()
        for node in plan.nodes.values()
        if node.operator.kind is OperatorKind.WINDOW
    ]
    operator = implementation(OperatorKind.WINDOW)("window", params, TaskInfo("window", 0, 1, 128, 0, batch=False))
    emitted: list[Any] = []
    operator.output.targets.append(lambda value, timestamp: emitted.append((value, timestamp)))
    operator.output.seal()
    operator.open()
    for n in range(1, 5):
        operator.process(("a", n), n * 10)
    # Each fired window is stamped with its last element's timestamp, as PyFlink does.
    assert emitted == [(("a", 3), 20), (("a", 5), 30), (("a", 7), 40)]
    # Windows 0-2 fired and no element can join them again; window 3 waits for its second.
    assert list(operator.contents) == [("a", CountWindow(3))]
    assert list(operator.windows_of["a"]) == [CountWindow(3)]
    assert operator.snapshot_keyed()["a"]["value:slide-count-assigner"] == 4


def _stamps(env: Any) -> list[tuple[int, int | None]]:
    """A continuous trigger's firings of one window and the timestamps of their results."""
    from flowmagic.common import Time, WatermarkStrategy
    from flowmagic.datastream.window import ContinuousEventTimeTrigger, TumblingEventTimeWindows

    def stamped(value: tuple[str, int], ctx: Any) -> list[tuple[int, int | None]]:
        return [(value[1], ctx.timestamp())]

    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda row, _: row[1] * 1000)
    sums = (
        env.from_collection([("a", 1), ("a", 3)])
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda row: row[0])
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .trigger(ContinuousEventTimeTrigger.of(Time.seconds(2)))
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    return list(sums.process(stamped).execute_and_collect(executor="local"))


def test_a_pyflink_programs_window_results_carry_the_time_of_what_fired_them() -> None:
    # PyFlink 2.3.0 stamped a ContinuousEventTimeTrigger(2 s) firing of window [0, 10 s) with
    # the timer's 2000 (count_window_timestamps.txt: count windows, with the element's).
    pyflink_env = flowmagic.datastream.StreamExecutionEnvironment.get_execution_environment()
    pyflink_env.set_parallelism(1)
    assert _stamps(pyflink_env) == [(4, 2000), (4, 4000), (4, 6000), (4, 8000), (4, 9999)]
    # Java's WindowOperator stamps every firing with the window's max timestamp.
    java_env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    assert _stamps(java_env) == [(4, 9999)] * 5
