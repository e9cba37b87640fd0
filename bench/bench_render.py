"""How long drawing the graphs takes: DOT text, Graphviz layout and the cell's display.

Run with ``.venv/bin/python bench/bench_render.py [--runs N]``. Every case runs N times after
a warm-up, in interleaved rounds (one run of each case per round, so that a shared machine's
drifting speed affects all cases alike); it prints each case's median and its ratio to a
baseline measured in the same rounds (laying out a two-node graph), so that figures from
different machines can be compared. Targets:

* the ExecutionGraph of 50 vertices at parallelism 32 (1,600 subtasks), as a ``%%flow`` cell
  draws it (wide vertices collapsed), with every subtask drawn, and the whole display of that
  pipeline (the widget's four levels and the saved pictures): each under 2 s;
* a JobGraph of 1,000 operators (chaining disabled: 1,000 vertices): under 1 s;
* the physical graph of that 1,600-subtask pipeline (slot sharing, placement, partitions,
  gates and channels computed, then drawn as the Physical tab draws it: the first slots and
  the last), on a local environment's cluster (1 TaskManager x 32 slots) and on 8 x 4:
  each under 1 s.

The SVG cache is cleared before every run: each run lays the graphs out again.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import flowmagic
from flowmagic import compile as passes
from flowmagic.render import dot_to_svg, layout, to_dot, to_svg
from flowmagic.widgets import FlowGraphs


def pipeline_50x32() -> tuple[flowmagic.graph.StreamGraph, flowmagic.graph.JobGraph, flowmagic.graph.ExecutionGraph]:
    """50 vertices at parallelism 32; exchanges cycle through HASH (bundled), RESCALE
    (drawn wire by wire) and FORWARD between unchained operators. Its three graphs."""
    env = flowmagic.StreamExecutionEnvironment(parallelism=32)
    stream = env.from_sequence(1, 1_000)
    for index in range(48):
        if index % 3 == 0:
            stream = stream.key_by(lambda x: x % 100).map(lambda x: x)
        elif index % 3 == 1:
            stream = stream.rescale().map(lambda x: x)
        else:
            stream = stream.map(lambda x: x).disable_chaining()
    stream.print().disable_chaining()
    graphs = (env.get_stream_graph("bench"), env.get_job_graph("bench"), env.get_execution_graph("bench"))
    assert (len(graphs[2].vertices), graphs[2].num_subtasks) == (50, 1_600), graphs[2]
    return graphs


def job_graph_1000() -> flowmagic.graph.JobGraph:
    """1,000 operators in a line, chaining disabled: 1,000 vertices, 999 edges."""
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.disable_operator_chaining()
    stream = env.from_sequence(1, 1_000)
    for _ in range(998):
        stream = stream.map(lambda x: x)
    stream.print()
    graph = env.get_job_graph()
    assert len(graph.vertices) == 1_000, graph
    return graph


def display(graphs: tuple) -> None:
    """What a ``%%flow`` cell makes: the widget with its four drawings, and the saved pictures."""
    view = FlowGraphs("bench", *graphs).draw()
    view.saved_bundle()


def medians(actions: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """Median seconds of each action over ``runs`` interleaved rounds, after one warm-up each."""
    for action in actions.values():
        action()
    times: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(runs):
        for name, action in actions.items():
            dot_to_svg.cache_clear()
            start = time.perf_counter()
            action()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs (rounds) per case (default 5)")
    runs = parser.parse_args().runs

    start = time.perf_counter()
    dot_to_svg("digraph { a -> b }")
    startup = time.perf_counter() - start

    graphs = pipeline_50x32()
    wide = graphs[2]
    jobs = job_graph_1000()
    cases = [
        # name, target (s), DOT step (or None), whole step
        ("ExecutionGraph 1,600 subtasks, as drawn", 2.0, lambda: to_dot(wide), lambda: to_svg(wide)),
        (
            "ExecutionGraph 1,600 subtasks, all drawn",
            2.0,
            lambda: to_dot(wide, all_subtasks=True),
            lambda: to_svg(wide, all_subtasks=True),
        ),
        ("%%flow display of that pipeline (4 levels)", 2.0, None, lambda: display(graphs)),
        (
            "Physical, 1,600 subtasks on 1 x 32 slots",
            1.0,
            lambda: to_dot(passes.deploy(wide)),
            lambda: to_svg(passes.deploy(wide)),
        ),
        (
            "Physical, 1,600 subtasks on 8 x 4 slots",
            1.0,
            lambda: to_dot(passes.deploy(wide, 8, 4)),
            lambda: to_svg(passes.deploy(wide, 8, 4)),
        ),
        ("JobGraph, 1,000 operators (1,000 vertices)", 1.0, lambda: to_dot(jobs), lambda: to_svg(jobs)),
    ]
    actions: dict[str, Callable[[], object]] = {"baseline": lambda: dot_to_svg("digraph { a -> b }")}
    for name, _, dot_step, whole in cases:
        if dot_step is not None:
            actions[f"{name} DOT"] = dot_step
        actions[name] = whole
    result = medians(actions, runs)
    baseline = result["baseline"]
    print(f"Graphviz engine: {layout.engine().name}; first layout (engine start-up included): {startup * 1e3:.0f} ms")
    print(
        f"Median of {runs} interleaved rounds after warm-up; baseline = laying out a 2-node graph: "
        f"{baseline * 1e3:.2f} ms\n"
    )
    header = f"{'case':<46}{'DOT ms':>9}{'total ms':>10}{'x baseline':>12}{'target':>10}  "
    print(header)
    print("-" * len(header))
    for name, target, dot_step, _ in cases:
        total = result[name]
        dot = f"{result[f'{name} DOT'] * 1e3:.1f}" if dot_step is not None else "-"
        verdict = "ok" if total < target else "SLOW"
        print(f"{name:<46}{dot:>9}{total * 1e3:>10.1f}{total / baseline:>12.0f}{f'< {target:g} s':>10}  {verdict}")
    print(
        "\ntotal ms: graph -> DOT -> Graphviz layout -> SVG with hover titles (DOT ms included); for the display,"
        "\nthe widget's four drawings and the saved pictures (data-URI images and the stacked SVG); for the"
        "\nphysical graph, computing it from the ExecutionGraph is included in both columns."
    )


if __name__ == "__main__":
    main()
