"""A SQL query's result in saved and exported notebooks: executed by nbclient on a real kernel
and saved with its widget state (as ``jupyter nbconvert --execute`` saves it), then opened
untrusted in JupyterLab, and exported with ``jupyter nbconvert --to html`` and opened offline,
in headless Chromium: where the live widget cannot be drawn, the SQL client's tableau text of
the result stands for it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
import test_browser
from nbclient import NotebookClient
from test_browser import STARTUP_SECONDS, chromium_page, exported_html, lab_server

pytestmark = pytest.mark.e2e
playwright_api = test_browser.playwright_api  # the fixture: Chromium installed, Playwright imported

ROOT = Path(__file__).resolve().parents[2]
SQL = ROOT / "tests" / "conformance" / "sql"
TABLEAU = json.loads((SQL / "expected" / "s02_group_count_values.json").read_text())["streaming"]["sql_client_tableau"]
CELLS = [
    "%load_ext flowmagic",
    "%%flow counts --sql -p 1 --show none\n" + (SQL / "cases" / "s02_group_count_values.sql").read_text(),
    "%flow run counts --executor local",
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    client = NotebookClient(notebook, kernel_name="python3", timeout=300, store_widget_state=True)
    client.execute(env=env)
    assert "widgets" in notebook.metadata
    path = tmp_path_factory.mktemp("saved") / "saved_sql.ipynb"
    nbformat.write(notebook, path)
    return path


def _lines(text: str) -> list[str]:
    return text.strip().splitlines()


def test_the_saved_notebook_keeps_the_tableau_text(saved: Path) -> None:
    outputs = nbformat.read(saved, as_version=4).cells[2].outputs
    [static] = [output for output in outputs if "sqlresult-static" in output.get("data", {}).get("text/html", "")]
    text = static.data["text/plain"]
    # Flink's text, its rows in the order this run produced them (Flink's order per key).
    recorded = _lines(TABLEAU)
    assert _lines(text)[:3] == recorded[:3] and _lines(text)[-2:] == recorded[-2:]
    assert sorted(_lines(text)[3:-2]) == sorted(recorded[3:-2])


def test_nbconvert_html_opened_offline_shows_the_tableau_text(saved: Path, playwright_api: Any) -> None:
    exported = exported_html(saved)
    with chromium_page(playwright_api, allow=("file://",)) as browser:
        browser.page.goto(exported.as_uri())
        static = browser.page.locator(".flowmagic-sqlresult-static pre")
        static.wait_for(state="visible", timeout=60_000)
        lines = _lines(static.inner_text())
        assert lines[1] == "| op |         num |                  cnt |"
        assert lines[-1] == "Received a total of 10 rows"
        # Without its scripts (from a CDN, blocked as offline) the widget is not drawn.
        assert browser.page.locator(".flowmagic-sqlresult").count() == 0


def test_jupyterlab_shows_an_untrusted_notebooks_result_as_its_tableau_text(saved: Path, playwright_api: Any) -> None:
    with lab_server(saved) as url, chromium_page(playwright_api) as browser:
        page = browser.page
        page.goto(url, timeout=STARTUP_SECONDS * 1000)
        static = page.locator(".flowmagic-sqlresult-static pre")
        static.wait_for(state="visible", timeout=STARTUP_SECONDS * 1000)
        trusted = page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.widgets.map(cell => cell.model.trusted)"
        )
        assert trusted == [False] * len(CELLS)
        assert _lines(static.inner_text())[-1] == "Received a total of 10 rows"
        # Why it retracts survives the sanitizer too, folded.
        summary = page.locator(".flowmagic-sqlresult-static details summary")
        assert summary.inner_text().startswith("This query retracts")
        assert page.locator(".flowmagic-sqlresult").count() == 0
