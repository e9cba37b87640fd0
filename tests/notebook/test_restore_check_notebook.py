"""``%flow check NAME --savepoint DIR`` in a real kernel, and what a user sees of it in Chromium.

A notebook runs a continuous pipeline, stops it with a savepoint, edits it (a state of another
kind, an operator removed, one added, another parallelism) and checks the savepoint against
the edit: by the magic, by ``Pipeline.check_restore``, and by a restore that is refused. It
is executed once by nbclient on a real kernel (with Spark) and saved. Then, in headless
Chromium: JupyterLab runs the check live (trusted, no Spark needed); JupyterLab opens the
saved notebook untrusted; and its ``nbconvert --to html`` export is opened offline. Each time
the JobGraph must be a visible picture, with the table of verdicts beside it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
import test_browser
from nbclient import NotebookClient
from test_browser import STARTUP_SECONDS, Browser, chromium_page, exported_html, lab_server, run_all_cells

pytestmark = pytest.mark.e2e
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
playwright_api = test_browser.playwright_api  # the fixture: Chromium installed, Playwright imported

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = """\
from flowmagic import KeyedProcessFunction, ListStateDescriptor, ValueStateDescriptor, Types

class Count(KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))
    def process_element(self, value, ctx, out):
        self.count.update((self.count.value() or 0) + 1)
        out.collect((value[0], self.count.value()))

class CountInAList(KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_list_state(ListStateDescriptor("count", Types.LONG()))
    def process_element(self, value, ctx, out):
        self.count.add(1)
        out.collect(value)

class Seen(KeyedProcessFunction):
    def open(self, runtime_context):
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.BOOLEAN()))
    def process_element(self, value, ctx, out):
        if not self.seen.value():
            self.seen.update(True)
            out.collect(value)

class Totals(KeyedProcessFunction):
    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))
    def process_element(self, value, ctx, out):
        out.collect(value)
"""
ORIGINAL = """\
%%flow counting --parallelism 2 --show none
pairs = env.from_datagen(lambda i: i, rows_per_second=500).uid("numbers").map(lambda i: (f"k{i % 5}", 1))
counted = pairs.key_by(lambda p: p[0]).process(Count()).uid("counts").name("counts")
counted.key_by(lambda p: p[0]).process(Seen()).uid("first").name("first per key").print()"""
EDITED = """\
%%flow edited --parallelism 3 --show none
pairs = env.from_datagen(lambda i: i, rows_per_second=500).uid("numbers").map(lambda i: (f"k{i % 5}", 1))
counted = pairs.key_by(lambda p: p[0]).process(CountInAList()).uid("counts").name("counts")
counted.key_by(lambda p: p[0]).process(Totals()).uid("totals").name("totals").print()"""
STOP = """\
import time
job = counting.jobs[0]
deadline = time.time() + 180
while job.epochs < 2 and time.time() < deadline:
    time.sleep(0.2)
%flow stop counting --savepoint {savepoint}"""


def _cells(savepoint: str) -> list[tuple[str, list[str]]]:
    return [
        ("%load_ext flowmagic", []),
        (FUNCTIONS, []),
        (ORIGINAL, []),
        ("%flow run counting", []),
        (STOP.format(savepoint=savepoint), []),
        (EDITED, []),
        (f"%flow check edited --savepoint {savepoint}", []),
        (f"print(edited.check_restore({savepoint!r}, parallelism=2).to_text())", []),
        (f"%flow run edited --from-savepoint {savepoint}", ["raises-exception"]),
    ]


def _notebook(cells: list[tuple[str, list[str]]]) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source, metadata={"tags": tags}) for source, tags in cells]
    return notebook


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> tuple[nbformat.NotebookNode, Path, str]:
    """The notebook run on a real kernel and saved; and the savepoint it wrote."""
    folder = tmp_path_factory.mktemp("restore-check-notebook")
    savepoint = str(folder / "sp")
    notebook = _notebook(_cells(savepoint))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "PYSPARK_PYTHON": sys.executable,
    }
    # Widget state saved, as `jupyter nbconvert --execute` saves it.
    NotebookClient(notebook, kernel_name="python3", timeout=400, store_widget_state=True).execute(env=env)
    path = folder / "checked.ipynb"
    nbformat.write(notebook, path)
    return notebook, path, savepoint


def _text(output: Any) -> str:
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return "\n".join(output.traceback)
    return output.data.get("text/plain", "")


def test_the_magic_the_python_api_and_a_refused_restore_in_a_real_kernel(executed) -> None:
    notebook, _path, savepoint = executed
    (stopped,) = [output for output in notebook.cells[4].outputs if output.output_type == "stream"]
    assert f"Savepoint completed. Path: file:{savepoint}" in stopped.text
    # The picture and table for saved copies, then the live widget (no text of its own).
    checked, live = notebook.cells[6].outputs
    assert checked.output_type == live.output_type == "display_data"
    assert WIDGET_VIEW in live.data and live.data["text/plain"] == ""
    text = checked.data["text/plain"]
    assert text.startswith(
        f"Restoring {savepoint} into 'edited': refused (1 restored, 1 new, 1 missing, 1 incompatible)"
    )
    for line in (
        "restored      Source: Data Generator  [",
        "incompatible  counts  [",
        "state 'count': VALUE of Long in the savepoint, LIST of Long in the program",
        "Incompatible key/value state types. Was [VALUE], registered with [LIST].",
        "new           totals  [",
        "state 'total': VALUE of Long, new: starts empty",
        "keyed state: key groups 0-127 re-split from 2 to 3 subtasks",
        "Cannot map checkpoint/savepoint state for operator",
    ):
        assert line in text, line
    html_output = checked.data["text/html"]
    assert 'class="flowmagic-restore-check' in html_output and '<img src="data:image/svg+xml;base64,' in html_output
    # The Python API gives the same verdicts (here at the savepoint's parallelism).
    api = "".join(_text(output) for output in notebook.cells[7].outputs)
    assert "incompatible  counts  [" in api and "keyed state: key groups 0-127 over 2 subtasks, as saved" in api
    # A restore runs the check first: refused with Flink's first failure and the whole list.
    refused = "".join(_text(output) for output in notebook.cells[8].outputs)
    assert "UsageError" in refused and "Cannot map checkpoint/savepoint state for operator" in refused
    assert "Incompatible key/value state types. Was [VALUE], registered with [LIST]." in refused


# The check's picture in the page: loaded, drawn at a size, visible; and its table's rows.
CHECK = """() => [...document.querySelectorAll('.flowmagic-restore-check')].map(view => {
    const img = view.querySelector('img');
    return {alt: img && img.alt, loaded: !!img && img.complete && img.naturalWidth > 0,
            width: img ? img.getBoundingClientRect().width : 0, visible: !!img && img.checkVisibility(),
            rows: [...view.querySelectorAll('tbody tr')].map(row =>
                [...row.querySelectorAll('td')].map(cell => cell.textContent.trim()))};
})"""


def expect_verdicts(rows: list[list[str]]) -> None:
    verdicts = {row[1]: row[0] for row in rows}
    assert verdicts["counts"] == "incompatible" and verdicts["totals"] == "new"
    assert verdicts["Source: Data Generator"] == "restored" and verdicts["Map"] == "no state"
    assert verdicts["(no operator in the program)"] == "missing"


def expect_check(browser: Browser) -> None:
    """The saved picture and table: what a notebook shows where the widget is not drawn."""
    page = browser.page
    page.wait_for_function(
        "[...document.querySelectorAll('.flowmagic-restore-check img')].some(img => img.complete)", timeout=120_000
    )
    (view,) = page.evaluate(CHECK)
    assert view["alt"].startswith("JobGraph of edited: Restoring ") and "refused" in view["alt"]
    assert view["loaded"] and view["visible"] and view["width"] > 200, view
    table = page.locator(".flowmagic-restore-check .flowmagic-restore-table")
    table.scroll_into_view_if_needed(timeout=30_000)
    assert table.is_visible()
    expect_verdicts(view["rows"])
    assert page.locator(".flowmagic-restore-live").count() == 0
    text = page.locator("body").inner_text()
    for fallback in ("Error displaying widget", "Cannot display", "RestoreCheckView"):
        assert fallback not in text
    assert browser.dialogs == []


def test_live_in_jupyterlab(executed, playwright_api: Any, tmp_path: Path) -> None:
    _notebook_run, _path, savepoint = executed
    live = tmp_path / "live.ipynb"
    cells = [("%load_ext flowmagic", []), (FUNCTIONS, []), (EDITED, [])]
    nbformat.write(_notebook([*cells, (f"%flow check edited --savepoint {savepoint}", [])]), live)
    with lab_server(live) as url, chromium_page(playwright_api) as browser:
        page = browser.page
        run_all_cells(page, url)
        live_view = page.locator(".flowmagic-restore-live")
        live_view.wait_for(timeout=120_000)
        # The widget is drawn: the drawing inline, and the saved picture of its output hidden.
        drawing = live_view.locator("svg")
        assert drawing.is_visible() and drawing.bounding_box()["width"] > 200
        assert not page.locator(".flowmagic-restore-check").is_visible()
        # Hovering a vertex shows its <title>: the operators' IDs, states and the refusal.
        titles = live_view.locator("svg g.node > title").all_text_contents()
        (counts,) = [title for title in titles if "counts [" in title]
        assert "counts [" in counts and ": incompatible" in counts
        assert "state 'count': VALUE of Long in the savepoint, LIST of Long in the program" in counts
        assert "Incompatible key/value state types. Was [VALUE], registered with [LIST]." in counts
        live_view.locator("svg g.node", has_text="counts: incompatible").hover()
        rows = live_view.locator("tbody tr").evaluate_all(
            "rows => rows.map(row => [...row.querySelectorAll('td')].map(cell => cell.textContent.trim()))"
        )
        expect_verdicts(rows)
        assert browser.blocked == [] and browser.dialogs == []


def test_saved_notebook_untrusted_in_jupyterlab(executed, playwright_api: Any) -> None:
    _notebook_run, path, _savepoint = executed
    with lab_server(path) as url, chromium_page(playwright_api) as browser:
        browser.page.goto(url, timeout=STARTUP_SECONDS * 1000)
        browser.page.wait_for_selector(".jp-OutputArea-output", timeout=STARTUP_SECONDS * 1000)
        expect_check(browser)
        assert browser.blocked == []


def test_exported_html_offline(executed, playwright_api: Any) -> None:
    _notebook_run, path, _savepoint = executed
    exported = exported_html(path)
    with chromium_page(playwright_api, allow=("file://",)) as browser:
        browser.page.goto(exported.as_uri())
        expect_check(browser)
