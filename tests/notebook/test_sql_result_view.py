"""The SQL result view without a kernel: the table and the changelog it draws from Flink's
recorded changelog of the seed query over VALUES, its switch, what saved notebooks keep, and
the job view naming the plan nodes each vertex runs."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from flowmagic.errors import ProgramError
from flowmagic.runtime.continuous.output import EpochOutput
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.sql_pipeline import SqlPipeline
from flowmagic.widgets.job_view import JobView
from flowmagic.widgets.sql_result import SqlResultView

SQL = Path(__file__).parents[1] / "conformance" / "sql"
SEED = (SQL / "cases" / "s01_seed_group_count.sql").read_text()
RECORDED = json.loads((SQL / "expected" / "s02_group_count_values.json").read_text())["streaming"]


def _fed(**options) -> SqlResultView:
    view = SqlResultView("counts", ["num", "cnt"], [0], **options)
    for kind, *values in RECORDED["rows"]:
        view.add(kind, values)
    return view


def _cells(page: str) -> list[list[str]]:
    return [re.findall(r"<td>([^<]*)</td>", row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", page) if "<td>" in row]


def test_the_table_shows_each_groups_row_updated_in_place() -> None:
    view = _fed()
    assert _cells(view.table_html()) == [["1", "3"], ["2", "2"], ["3", "1"], ["5", "1"]]
    assert view.summary() == "RUNNING · 10 rows received (4 +I, 3 -U, 3 +U) · the table has 4 rows"


def test_the_changelog_shows_every_row_with_its_kind_coloured() -> None:
    view = _fed()
    page = view.changelog_html()
    assert _cells(page) == [[kind, *values] for kind, *values in RECORDED["rows"]]
    assert "<th>op</th><th>num</th><th>cnt</th>" in page
    kinds = re.findall(r"<tr class='(kind-[A-Z]+)'><td>([^<]+)</td>", page)
    assert set(kinds) == {("kind-I", "+I"), ("kind-UB", "-U"), ("kind-UA", "+U")}


def test_the_switch_chooses_what_is_drawn() -> None:
    view = _fed()
    assert "result-table" in view._rows.value
    view.view = "Changelog"
    assert "result-changelog" in view._rows.value and "<td>-U</td>" in view._rows.value


def test_large_results_draw_the_newest_rows_and_count_them_all() -> None:
    view = SqlResultView("big", ["n"], shown=5, keep=5)
    for n in range(1000):
        view.add("+I", (n,))
    assert _cells(view.changelog_html()) == [["+I", str(n)] for n in range(995, 1000)]
    assert "The newest 5 of 1,000 rows received." in view.changelog_html()
    assert "The 5 most recently changed of 1,000 rows." in view.table_html()


def test_saved_notebooks_keep_the_tableau_text_once_the_job_ended() -> None:
    view = _fed()
    assert view.static_bundle()["text/plain"].startswith("<SQL result of 'counts': RUNNING")
    view.finish("FINISHED", RECORDED["sql_client_tableau"])
    bundle = view.static_bundle()
    assert bundle["text/plain"] == RECORDED["sql_client_tableau"]
    assert "| op |         num |                  cnt |" in bundle["text/html"]
    assert "flowmagic-sqlresult-static" in bundle["text/html"]
    # The live widget shows it too, under the rows.
    assert "Received a total of 10 rows" in view._final.value


def test_the_job_view_names_the_plan_nodes_each_vertex_runs() -> None:
    pipeline = SqlPipeline("seed", SEED)
    monitor = JobMonitor("seed")
    for vertex in pipeline.job_graph.vertices.values():
        monitor.add_vertex(vertex.id, vertex.name, vertex.parallelism)
    view = JobView(pipeline.job_graph, plan_nodes=pipeline.plan_nodes())
    view.update(monitor.snapshot(), now=0.0)
    page = view.to_html()
    assert (
        "GroupAggregate[3] -&gt; ConstraintEnforcer[4] runs <code>[3]:GroupAggregate(groupBy=[num], "
        "select=[num, COUNT(*) AS cnt])</code> &rarr; "
        "<code>[4]:ConstraintEnforcer[NotNullEnforcer(fields=[cnt])]</code>" in page
    )


def test_a_continuous_jobs_epochs_update_the_view_off_the_coordinators_thread() -> None:
    pipeline = SqlPipeline("seed", SEED)
    run = pipeline._run_output()
    assert run is not None
    run.display()
    # Each epoch's rows as the collect sink hands them over: values, then the kind's byte.
    epochs = [[(1, 1, 0), (2, 1, 0)], [(1, 1, 1), (1, 2, 2)], [(3, 1, 0), (2, 1, 1), (2, 2, 2)]]
    for number, rows in enumerate(epochs, start=1):
        run.epoch(EpochOutput(number, collected={run.sink_id: rows}))
        deadline = time.monotonic() + 60
        while run.view.table.received < sum(len(e) for e in epochs[:number]):
            assert time.monotonic() < deadline, "the view did not take the epoch's rows"
            time.sleep(0.01)
    assert run.view.tableau is None and run.view.state == "RUNNING"
    run.ended("CANCELED")
    assert run.view.table.rows() == [(1, 2), (2, 2), (3, 1)]
    assert run.view.summary() == "CANCELED · 7 rows received (3 +I, 2 -U, 2 +U) · the table has 3 rows"
    lines = run.view.tableau.splitlines()
    assert lines[1] == "| op |         num |                  cnt |"
    assert lines[3] == "| +I |           1 |                    1 |" and lines[-1] == "Received a total of 7 rows"


def test_a_sql_pipeline_runs_in_the_mode_it_was_planned_in() -> None:
    pipeline = SqlPipeline("counts", (SQL / "cases" / "s02_group_count_values.sql").read_text())
    with pytest.raises(ProgramError, match="was planned in streaming mode, and Flink plans a statement for one mode"):
        pipeline.run(mode="batch", executor="local", live=False)
    assert pipeline.run(mode="streaming", executor="local", live=False).state == "FINISHED"
