"""Busy and back-pressured time derived as Flink's bounded network buffers make it, and the
colours Flink's web UI gives a vertex for them."""

from __future__ import annotations

import pytest

from flowmagic.render import load_colours
from flowmagic.runtime.backpressure import SubtaskLoad, consumers_of, derive_load, since_measured, vertex_percentages


def shown(load: SubtaskLoad) -> tuple[float, float]:
    """Busy and back-pressured ms/s, to the microsecond (the figures are sums of floats)."""
    return round(load.busy, 3), round(load.backpressured, 3)


def test_a_slow_operator_is_busy_everything_before_it_backpressured_and_after_it_idle() -> None:
    busy = {("source", 0): 0.1, ("parse", 0): 0.2, ("slow", 0): 0.8, ("sink", 0): 0.05}
    consumers = {("source", 0): [("parse", 0)], ("parse", 0): [("slow", 0)], ("slow", 0): [("sink", 0)]}
    load = derive_load(busy, consumers, period=1.0)
    assert shown(load[("slow", 0)]) == (800, 0)
    # Back-pressure reaches through parse to the source: each waits for what slow takes.
    assert shown(load[("parse", 0)]) == (200, 600)
    assert shown(load[("source", 0)]) == (100, 700)
    assert shown(load[("sink", 0)]) == (50, 0) and load[("sink", 0)].idle == 950


def test_a_producer_waits_for_its_slowest_consumer_only() -> None:
    busy = {("source", 0): 0.1, ("fast", 0): 0.1, ("fast", 1): 0.5}
    load = derive_load(busy, {("source", 0): [("fast", 0), ("fast", 1)]}, period=2.0)
    assert shown(load[("source", 0)]) == (50, 200)
    # A consumer that has not run (none of its figures) holds nobody back.
    load = derive_load({("source", 0): 0.1}, {("source", 0): [("fast", 0)]}, period=2.0)
    assert shown(load[("source", 0)]) == (50, 0)


def test_the_figures_of_a_second_stay_within_it() -> None:
    load = derive_load({("a", 0): 3.0, ("b", 0): 0.5}, {("b", 0): [("a", 0)]}, period=2.0)
    assert shown(load[("a", 0)]) == (1000, 0) and shown(load[("b", 0)]) == (250, 750)
    assert load[("b", 0)].idle == 0


def test_channels_name_their_consumers() -> None:
    assert consumers_of({"abc/0": 3, "abc/1": 0, "d/e/12": 1}) == [("abc", 0), ("d/e", 12)]


def test_a_vertex_shows_its_busiest_and_most_backpressured_subtask() -> None:
    loads = [SubtaskLoad(100, 700), None, SubtaskLoad(400, 200)]
    assert vertex_percentages(loads) == (40, 70)
    assert vertex_percentages([None, None]) is None


def test_an_idle_job_fades_to_idle() -> None:
    measured = SubtaskLoad(800, 100)
    # Within as long again as it was measured over: the usual wait for the next epoch.
    assert since_measured(measured, 10.0, 12.0, 13.9) == measured
    assert shown(since_measured(measured, 10.0, 12.0, 18.0)) == (400, 50)


@pytest.mark.parametrize(
    ("busy", "pressured", "colours"),
    [
        # Flink's web UI (flink-runtime-web node.component.ts): idle, busy, back-pressured.
        (0, 0, ("#5db1ff", "#1890ff")),
        (100, 0, ("#ee6464", "#ee2222")),
        (0, 100, ("#888888", "#000000")),
        # Blended towards busy, then towards back-pressured, halves rounded up as Math.round.
        (50, 0, ("#a68bb2", "#835991")),
        (50, 50, ("#978a9d", "#422d49")),
    ],
)
def test_vertices_are_coloured_as_flinks_web_ui_colours_them(busy, pressured, colours) -> None:
    assert load_colours(busy, pressured) == colours
