"""How long drawing the graphs takes: DOT text and Graphviz layout, after warm-up.

Run with ``.venv/bin/python bench/bench_render.py [--runs N]``. Prints the median of N runs
per case, and each case's ratio to a baseline measured in the same run (laying out a
two-node graph), so that figures from different machines can be compared. Targets:

* the ExecutionGraph of 50 vertices at parallelism 32 (1,600 subtasks): under 2 s;
* a JobGraph of 1,000 operators (chaining disabled: 1,000 vertices): under 1 s.

The SVG cache is cleared before every run: each run lays the graph out again.
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
from flowmagic.render import dot_to_svg, layout, to_dot, to_svg


def execution_graph_50x32() -> flowmagic.graph.ExecutionGraph:
    """50 vertices at parallelism 32; exchanges cycle through HASH (bundled), RESCALE
    (drawn wire by wire) and FORWARD between unchained operators."""
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
    graph = env.get_execution_graph()
    assert (len(graph.vertices), graph.num_subtasks) == (50, 1_600), graph
    return graph


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


def median_seconds(action: Callable[[], object], runs: int) -> float:
    action()  # warm-up
    times = []
    for _ in range(runs):
        dot_to_svg.cache_clear()
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per case (default 5)")
    runs = parser.parse_args().runs

    start = time.perf_counter()
    dot_to_svg("digraph { a -> b }")
    startup = time.perf_counter() - start
    baseline = median_seconds(lambda: dot_to_svg("digraph { a -> b }"), runs)

    cases = [
        ("ExecutionGraph, 50 vertices x p=32 (1,600 subtasks)", execution_graph_50x32(), 2.0),
        ("JobGraph, 1,000 operators (1,000 vertices)", job_graph_1000(), 1.0),
    ]
    print(f"Graphviz engine: {layout.engine().name}; first layout (engine start-up included): {startup * 1e3:.0f} ms")
    print(f"Median of {runs} runs after warm-up; baseline = laying out a 2-node graph: {baseline * 1e3:.2f} ms\n")
    header = f"{'case':<54}{'DOT ms':>9}{'SVG ms':>10}{'x baseline':>12}{'target':>10}  "
    print(header)
    print("-" * len(header))
    for name, graph, target in cases:
        dot_seconds = median_seconds(lambda graph=graph: to_dot(graph), runs)
        svg_seconds = median_seconds(lambda graph=graph: to_svg(graph), runs)
        verdict = "ok" if svg_seconds < target else "SLOW"
        print(
            f"{name:<54}{dot_seconds * 1e3:>9.1f}{svg_seconds * 1e3:>10.1f}{svg_seconds / baseline:>12.0f}"
            f"{f'< {target:g} s':>10}  {verdict}"
        )
    print("\nSVG ms: graph -> DOT -> Graphviz layout -> SVG with hover titles (DOT ms included).")


if __name__ == "__main__":
    main()
