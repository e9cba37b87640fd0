"""A SQL query's result in JupyterLab, in headless Chromium: ``%flow run`` on a ``%%flow --sql``
cell (the seed query over Flink's VALUES case s02) shows the materialized table, a switch to
the changelog with its ``op`` column and rows coloured by kind, and at the end the SQL client's
tableau text, selectable, and why the query retracts; the saved text stays hidden while the
live widget is drawn."""

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
    lab_server,
    playwright_api,
    run_all_cells,
)

pytestmark = pytest.mark.e2e

COUNTS = (Path(__file__).parents[1] / "conformance" / "sql" / "cases" / "s02_group_count_values.sql").read_text()
# 3,000 random numbers: a result larger than the view draws.
MANY = (
    "CREATE TABLE numbers (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3000', "
    "'fields.n.min' = '0', 'fields.n.max' = '1000000');\n"
    "SELECT n, n * 2 AS twice FROM numbers;"
)
# The rows of a table, each as its cells' texts.
ROWS = "table => [...table.querySelectorAll('tr')].slice(1).map(row => [...row.cells].map(cell => cell.textContent))"


@pytest.fixture(scope="module")
def result_browser(playwright_api: Any) -> Iterator[Browser]:  # noqa: F811 - the imported fixture
    """The seed query over VALUES run in JupyterLab and shown in Chromium, once it finished."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext flowmagic"),
        nbformat.v4.new_code_cell("%%flow counts --sql -p 1 --show none\n" + COUNTS),
        nbformat.v4.new_code_cell("%flow run counts --executor local"),
        nbformat.v4.new_code_cell(f"%%flow many --sql -p 1 --show none\n{MANY}"),
        nbformat.v4.new_code_cell("%flow run many --executor local"),
    ]
    with tempfile.TemporaryDirectory(prefix="flowmagic-sql-") as folder:
        path = Path(folder) / "sql_result.ipynb"
        nbformat.write(notebook, path)
        with lab_server(path) as url, chromium_page(playwright_api) as state:
            page = state.page
            run_all_cells(page, url)
            page.wait_for_selector(".flowmagic-sqlresult", timeout=STARTUP_SECONDS * 1000)
            page.wait_for_function(
                "document.querySelectorAll('.flowmagic-sqlresult .flowmagic-sqlresult-tableau').length === 2",
                timeout=STARTUP_SECONDS * 1000,
            )
            yield state


def test_the_table_shows_the_materialized_result(result_browser: Browser) -> None:
    view = result_browser.page.locator(".flowmagic-sqlresult").first
    assert "FINISHED · 10 rows received (4 +I, 3 -U, 3 +U) · the table has 4 rows" in view.inner_text()
    table = view.locator("table.result-table")
    assert table.locator("th").all_inner_texts() == ["num", "cnt"]
    assert table.evaluate(ROWS) == [["1", "3"], ["2", "2"], ["3", "1"], ["5", "1"]]
    # The job view above names the plan node each vertex runs.
    assert "runs [3]:GroupAggregate(groupBy=[num], select=[num, COUNT(*) AS cnt])" in (
        result_browser.page.locator(".flowmagic-job").first.inner_text()
    )


def test_the_switch_shows_the_changelog_coloured_by_kind(result_browser: Browser) -> None:
    page = result_browser.page
    view = page.locator(".flowmagic-sqlresult").first
    view.get_by_role("button", name="Changelog").click()
    changelog = view.locator("table.result-changelog")
    changelog.wait_for(state="visible")
    assert changelog.locator("th").all_inner_texts() == ["op", "num", "cnt"]
    rows = changelog.evaluate(ROWS)
    assert len(rows) == 10 and {row[0] for row in rows} == {"+I", "-U", "+U"}
    colours = changelog.evaluate(
        "table => Object.fromEntries([...table.querySelectorAll('tr')].slice(1).map(row =>"
        " [row.cells[0].textContent, getComputedStyle(row.cells[1]).backgroundColor]))"
    )
    # Three kinds, three colours, none of them the page's.
    assert len(set(colours.values())) == 3 and "rgba(0, 0, 0, 0)" not in colours.values()
    view.get_by_role("button", name="Table").click()
    view.locator("table.result-table").wait_for(state="visible")
    assert view.locator("table.result-changelog").count() == 0


def test_the_sql_clients_text_follows_selectable_and_the_saved_copy_stays_hidden(result_browser: Browser) -> None:
    page = result_browser.page
    text = page.locator(".flowmagic-sqlresult .flowmagic-sqlresult-tableau pre").first
    lines = text.inner_text().splitlines()
    assert lines[1] == "| op |         num |                  cnt |"
    assert lines[-1] == "Received a total of 10 rows"
    assert text.evaluate("pre => getComputedStyle(pre).userSelect") != "none"
    # Selecting it (as a user would, to copy it) selects the text itself.
    text.click(click_count=3)
    assert page.evaluate("() => window.getSelection().toString()").strip() != ""
    assert not page.locator(".flowmagic-sqlresult-static").first.is_visible()
    assert result_browser.blocked == []


def test_why_the_query_retracts_unfolds_next_to_the_result(result_browser: Browser) -> None:
    why = result_browser.page.locator(".flowmagic-sqlresult details.why").first
    summary = why.locator("summary")
    assert summary.inner_text() == (
        "This query retracts: its result holds +I, -U, +U rows, starting at GroupAggregate[3]."
    )
    assert not why.locator(".flowmagic-retraction").is_visible()
    summary.click()
    assert "To get inserts only:" in why.locator(".flowmagic-retraction").inner_text()
    # The result redraws without folding it again: it stays open.
    assert why.evaluate("details => details.open")


def test_a_large_result_draws_its_newest_rows_and_counts_them_all(result_browser: Browser) -> None:
    view = result_browser.page.locator(".flowmagic-sqlresult").nth(1)
    assert "FINISHED · 3,000 rows received (3,000 +I) · the table has 3,000 rows" in view.inner_text()
    assert "This query never retracts" in view.locator("details.why summary").inner_text()
    table = view.locator("table.result-table")
    rows = table.evaluate(ROWS)
    assert len(rows) == 200 and all(int(twice) == 2 * int(n) for n, twice in rows)
    assert "The 200 most recently changed of 3,000 rows." in view.inner_text()
    view.get_by_role("button", name="Changelog").click()
    view.locator("table.result-changelog").wait_for(state="visible")
    assert "The newest 200 of 3,000 rows received." in view.inner_text()
    assert len(view.locator("table.result-changelog").evaluate(ROWS)) == 200
