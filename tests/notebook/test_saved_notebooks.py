"""Saved notebooks show the graphs as pictures: in JupyterLab untrusted, and exported to HTML.

A notebook with a ``%%flow`` cell, ``%flow show --format svg`` and ``%flow run`` is executed by
nbclient on a real kernel (with Spark) and saved as ``jupyter nbconvert --execute`` saves it,
widget state included. Then, in headless Chromium:

* JupyterLab opens it untrusted (a fresh signature database): no widget and no script may
  run, saved SVG is not shown, HTML is sanitized; every graph must still be a picture;
* ``jupyter nbconvert --to html`` of it, opened from disk with every network request
  blocked: the widget's scripts (from a CDN) cannot load; every graph must be a picture.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
import test_browser
from nbclient import NotebookClient
from test_browser import STARTUP_SECONDS, Browser, chromium_page, exported_html, lab_server
from test_magics import WORDCOUNT

pytestmark = pytest.mark.e2e
playwright_api = test_browser.playwright_api  # the fixture: Chromium installed, Playwright imported

ROOT = Path(__file__).resolve().parents[2]
CELLS = [
    "%load_ext flowmagic",
    f"%%flow wordcount --parallelism 4\n{WORDCOUNT}",
    "%flow show wordcount --level execution --format svg",
    "%flow run wordcount",
]
# Every picture in the page: loaded, drawn at a size, and visible.
PICTURES = """() => [...document.querySelectorAll('img')].map(img => ({
    alt: img.alt, loaded: img.complete && img.naturalWidth > 0, width: img.getBoundingClientRect().width,
    visible: img.checkVisibility()}))"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, playwright_api: Any) -> Path:
    """The notebook, executed and saved with its outputs and widget state."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "PYSPARK_PYTHON": sys.executable,
    }
    client = NotebookClient(notebook, kernel_name="python3", timeout=300, store_widget_state=True)
    client.execute(env=env)
    assert "widgets" in notebook.metadata  # as `jupyter nbconvert --execute` saves it
    path = tmp_path_factory.mktemp("saved") / "saved.ipynb"
    nbformat.write(notebook, path)
    return path


def expect_pictures(browser: Browser) -> list[dict[str, Any]]:
    """Wait until the page shows its pictures; check each is drawn and visible; return them."""
    page = browser.page
    page.wait_for_function("document.querySelectorAll('.flowmagic-static img').length === 4", timeout=60_000)
    # JupyterLab renders a long notebook's cells progressively: the run's picture, in the
    # last cell, may come after the others.
    page.wait_for_function("document.querySelector('.flowmagic-job img') !== null", timeout=60_000)
    page.wait_for_function("[...document.querySelectorAll('img')].every(img => img.complete)", timeout=60_000)
    pictures = page.evaluate(PICTURES)
    alts = [picture["alt"] for picture in pictures]
    assert alts == [
        "StreamGraph of wordcount",
        "JobGraph of wordcount",
        "ExecutionGraph of wordcount",
        "Physical of wordcount",
        "ExecutionGraph of wordcount",
        "JobGraph of wordcount, coloured by vertex state, busy and back-pressured time",
        "Physical graph of wordcount as it ran on Spark",
    ]
    for picture in pictures:
        assert picture["loaded"] and picture["visible"] and picture["width"] > 100, picture
    text = page.locator("body").inner_text()
    for fallback in ("<FlowGraphs", "SVG object", "Error displaying widget", "Cannot display"):
        assert fallback not in text
    # The run's final view as text: each subtask's load, and its place in event time.
    job = page.locator(".flowmagic-job").inner_text()
    assert "Busy (ms/s)\tIdle (ms/s)\tBack-pressured (ms/s)" in job
    assert "channel 0 of subtask 0 (Flat Map) at the end of time" in job
    # Its JobGraph as Flink's web UI colours it by load: every vertex with both figures.
    graph = page.evaluate("() => atob(document.querySelector('.flowmagic-job img').src.split('base64,')[1])")
    assert graph.count("Busy (max): ") == graph.count("Backpressured (max): ") == 3
    return pictures


@pytest.fixture
def untrusted_lab(saved: Path, playwright_api: Any) -> Iterator[Browser]:
    with lab_server(saved) as url, chromium_page(playwright_api) as browser:
        browser.page.goto(url, timeout=STARTUP_SECONDS * 1000)
        browser.page.wait_for_selector(".jp-OutputArea-output", timeout=STARTUP_SECONDS * 1000)
        yield browser


def test_jupyterlab_shows_an_untrusted_notebooks_graphs_as_pictures(untrusted_lab: Browser) -> None:
    page = untrusted_lab.page
    expect_pictures(untrusted_lab)
    trusted = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets.map(cell => cell.model.trusted)"
    )
    assert trusted == [False] * len(CELLS)
    # No widget is drawn untrusted; the pictures stand for it.
    assert page.locator(".flowmagic-graphs").count() == 0
    # The run view's table survives the sanitizer next to its picture.
    job = page.locator(".flowmagic-job")
    assert "FINISHED" in job.inner_text() and "Records/s" in job.inner_text()
    # And where each subtask ran on Spark, next to the Flink cluster's channels.
    assert "Physical graph on Spark: 9 of 9 subtasks placed on 1 executor (driver)" in job.inner_text()
    assert "Spark other process" in job.inner_text()
    # Each keyed subtask's place in event time: its input channels, at the end of time.
    assert "Input channels" in job.inner_text()
    assert "channel 0 of subtask 0 (Flat Map) at the end of time" in job.inner_text()
    assert untrusted_lab.blocked == [] and untrusted_lab.dialogs == []


def test_nbconvert_html_opened_offline_shows_the_graphs_as_pictures(saved: Path, playwright_api: Any) -> None:
    exported = exported_html(saved)
    with chromium_page(playwright_api, allow=("file://",)) as browser:
        browser.page.goto(exported.as_uri())
        expect_pictures(browser)
        # The export asked for the widget manager from a CDN (blocked, as offline): without
        # it the widgets are not drawn, and the pictures stay shown.
        assert browser.blocked and not any(url.startswith("file://") for url in browser.blocked)
        assert browser.page.locator(".flowmagic-graphs").count() == 0
