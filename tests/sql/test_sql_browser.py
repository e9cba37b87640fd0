"""What a user sees of a SQL cell in JupyterLab, in headless Chromium: the seed's statements
(tests/conformance/sql/cases/s01) drawn as Flink's three plans in a first tab, with why the
query retracts under them, hovering a plan line names the operator and JobGraph vertex it
became, and the graphs' tabs follow."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from test_browser import (  # noqa: F401 - playwright_api is a fixture used here
    STARTUP_SECONDS,
    Browser,
    chromium_page,
    graph_texts,
    lab_server,
    playwright_api,
    run_all_cells,
)

pytestmark = pytest.mark.e2e

SEED = (Path(__file__).parents[1] / "conformance" / "sql" / "cases" / "s01_seed_group_count.sql").read_text()


@pytest.fixture(scope="module")
def sql_browser(playwright_api: Any) -> Iterator[Browser]:  # noqa: F811 - the imported fixture
    """A notebook with the seed's SQL cell, run in JupyterLab and shown in Chromium."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext flowmagic"),
        nbformat.v4.new_code_cell("%%flow seed --sql\nSET 'parallelism.default' = '2';\n" + SEED),
    ]
    with tempfile.TemporaryDirectory(prefix="flowmagic-sql-") as folder:
        path = Path(folder) / "sql_demo.ipynb"
        nbformat.write(notebook, path)
        with lab_server(path) as url, chromium_page(playwright_api) as state:
            page = state.page
            run_all_cells(page, url)
            page.wait_for_function(
                "document.querySelectorAll('.flowmagic-graphs').length === 1", timeout=STARTUP_SECONDS * 1000
            )
            yield state


def test_the_sql_cell_shows_the_plans_first_then_the_graphs(sql_browser: Browser) -> None:
    widget = sql_browser.page.locator(".flowmagic-graphs").first
    tabs = widget.locator(".lm-TabBar-tab")
    assert tabs.all_inner_texts() == ["SQL plans", "StreamGraph", "JobGraph", "ExecutionGraph", "Physical"]
    plans = widget.locator(".flowmagic-level-sql")
    plans.wait_for(state="visible")
    text = plans.inner_text()
    for title in ("Abstract Syntax Tree", "Optimized Physical Plan", "Optimized Execution Plan"):
        assert title in text
    assert "GroupAggregate(groupBy=[num], select=[num, COUNT(*) AS cnt])" in text
    # The live widget hides the saved pictures of its own output area.
    assert not sql_browser.page.locator(".flowmagic-static").first.is_visible()


def test_hovering_a_plan_line_names_its_operator_and_vertex(sql_browser: Browser) -> None:
    widget = sql_browser.page.locator(".flowmagic-graphs").first
    line = widget.locator(".flowmagic-level-sql .flowmagic-plan-node", has_text="GroupAggregate(groupBy")
    line.hover()
    assert line.get_attribute("title") == (
        "ExecNode [3] became GroupAggregate[3] (StreamGraph node 3), "
        "in JobGraph vertex 'GroupAggregate[3] -> ConstraintEnforcer[4]'"
    )


def test_the_graphs_name_the_plan_nodes_they_came_from(sql_browser: Browser) -> None:
    widget = sql_browser.page.locator(".flowmagic-graphs").first
    widget.locator(".lm-TabBar-tab", has_text="JobGraph").click()
    level = widget.locator(".flowmagic-level-job")
    level.locator("svg").wait_for(state="visible")
    assert "GroupAggregate[3]" in graph_texts(widget, "job")
    titles = level.locator("svg g.node > title").all_text_contents()
    assert any(
        "from SQL plan node ExecNode [3] GroupAggregate(groupBy=[num], select=[num, COUNT(*) AS cnt])" in title
        for title in titles
    )
    assert sql_browser.blocked == []


def test_under_the_plans_the_cell_says_why_the_query_retracts(sql_browser: Browser) -> None:
    widget = sql_browser.page.locator(".flowmagic-graphs").first
    widget.locator(".lm-TabBar-tab", has_text="SQL plans").click()
    why = widget.locator(".flowmagic-level-sql .flowmagic-retraction")
    why.wait_for(state="visible")
    text = why.inner_text()
    assert "This query retracts: its result holds +I, -U, +U rows, starting at GroupAggregate[3]." in text
    assert "To get inserts only:" in text
