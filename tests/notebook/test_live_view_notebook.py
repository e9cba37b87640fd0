"""The final live view of a continuous job, kept by the saved notebook and its export.

A notebook runs a continuous job with a slow map, keyed state and timers, and checkpoints;
waits for three checkpoints and stops it with a savepoint. nbclient executes it on a real
kernel (with Spark) and saves it. The run's cell keeps the view as it last was: the JobGraph
coloured by busy and back-pressured time (a picture), and as text the subtasks' load, their
place in event time, each stateful operator's keys, timers and last snapshot, and the
checkpoints history. Then, in headless Chromium: JupyterLab runs the job live and its view
fills in as it runs; JupyterLab opens the saved notebook untrusted; and its ``nbconvert --to
html`` export is opened offline; each shows all of it.
"""

from __future__ import annotations

import base64
import os
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
import test_browser
from nbclient import NotebookClient
from test_browser import STARTUP_SECONDS, Browser, chromium_page, exported_html, lab_server, run_all_cells

from flowmagic.render import load_colours

pytestmark = pytest.mark.e2e
playwright_api = test_browser.playwright_api  # the fixture: Chromium installed, Playwright imported

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = """\
import time
from flowmagic import KeyedProcessFunction, ValueStateDescriptor, Types

class CountsAndWaits(KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))
    def process_element(self, value, ctx, out):
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_event_time_timer(10**12)
        out.collect(value)

def slow(value):
    time.sleep(0.005)
    return value"""
PIPELINE = """\
%%flow counting --parallelism 2 --show none
env.enable_checkpointing(300)
numbers = env.from_datagen(lambda i: f"k{i % 5}", rows_per_second=400).name("numbers")
slowed = numbers.rebalance().map(slow).name("slow map")
slowed.key_by(lambda key: key).process(CountsAndWaits()).name("counter").add_sink(lambda v: None).name("ignore")"""
STOP = """\
job = counting.jobs[0]
deadline = time.time() + 300
while len(job.checkpoints.history) < 3 and time.time() < deadline:
    time.sleep(0.2)
%flow stop counting --savepoint {savepoint}
while counting.jobs and time.time() < deadline:
    time.sleep(0.2)"""
TITLE = "JobGraph of counting, coloured by vertex state, busy and back-pressured time"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("live-view-notebook")
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cells = ["%load_ext flowmagic", FUNCTIONS, PIPELINE, "%flow run counting", STOP.format(savepoint=folder / "sp")]
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "PYSPARK_PYTHON": sys.executable,
    }
    NotebookClient(notebook, kernel_name="python3", timeout=500, store_widget_state=True).execute(env=env)
    path = folder / "live.ipynb"
    nbformat.write(notebook, path)
    return path


def _redness(fill: str) -> int:
    red, green, blue = (int(fill[i : i + 2], 16) for i in (1, 3, 5))
    return red - (green + blue) // 2


def expect_graph(svg: str) -> None:
    """The JobGraph as Flink's web UI colours it: each vertex with its busy and back-pressured
    percentage and the fill they give; the slow map the reddest, its source greyed."""
    figures = {}
    for node in re.findall(r'<g id="node\d+" class="node">.*?</g>', svg, re.DOTALL):
        texts = re.findall(r">([^<]+)</text>", node)
        (fill,) = re.findall(r'<path fill="(#[0-9a-f]{6})"', node)
        busy = next(int(text.split(": ")[1][:-1]) for text in texts if text.startswith("Busy (max)"))
        pressured = next(int(text.split(": ")[1][:-1]) for text in texts if text.startswith("Backpressured (max)"))
        assert fill == load_colours(busy, pressured)[0], (texts, fill)
        figures[texts[0]] = (busy, pressured, fill)
    source, slow, counter = figures["Source: numbers"], figures["slow map"], figures["counter"]
    assert slow[0] > 10 and slow[0] > source[0] and source[1] > 0, figures
    assert _redness(slow[2]) > _redness(source[2]) and _redness(slow[2]) > _redness(counter[2]), figures


def test_the_saved_notebook_keeps_the_final_view(saved: Path) -> None:
    notebook = nbformat.read(saved, as_version=4)
    (view,) = [output for output in notebook.cells[3].outputs if output.output_type == "display_data"]
    assert view.data["text/plain"].startswith("<Job 'counting': FINISHED")
    page = view.data["text/html"]
    match = re.search(rf'<img src="data:image/svg\+xml;base64,([^"]+)" alt="{TITLE}"', page)
    assert match, page[:2000]
    expect_graph(base64.b64decode(match.group(1)).decode())
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "Busy (ms/s) Idle (ms/s) Back-pressured (ms/s)" in text and "Input channels" in text
    # Five keys over the counter's two subtasks, each with its one timer.
    rows = re.findall(r"counter (\d) [0-9a-f]{32} (\d+) (\d+) [\d,.]+ K?B \((?:whole|changed keys)\)", text)
    assert sorted(index for index, _keys, _timers in rows) == ["0", "1"], text
    assert sum(int(keys) for _index, keys, _timers in rows) == 5 and all(keys == timers for _i, keys, timers in rows)
    history = re.findall(r"(\d+) COMPLETED \d+ \d\d:\d\d:\d\d [\d.]+ m?s [\d,.]+ K?B [\d,.]+ K?B", text)
    assert len(history) >= 3 and history == sorted(history, key=int, reverse=True), text


# The run's view in the page: its JobGraph picture, and its text.
VIEW = """() => { const view = document.querySelector('.flowmagic-job'); const img = view.querySelector('img');
    return {alt: img.alt, loaded: img.complete && img.naturalWidth > 0, width: img.getBoundingClientRect().width,
            visible: img.checkVisibility(), src: img.src, text: view.innerText}; }"""


def expect_view(browser: Browser) -> None:
    page = browser.page
    page.wait_for_function(
        "[...document.querySelectorAll('.flowmagic-job img')].some(img => img.complete)", timeout=120_000
    )
    view = page.evaluate(VIEW)
    assert view["alt"] == TITLE and view["loaded"] and view["visible"] and view["width"] > 300, view
    expect_graph(base64.b64decode(view["src"].split("base64,", 1)[1]).decode())
    for shown in ("Back-pressured (ms/s)", "Input channels", "Checkpoints history", "Full Checkpoint Data Size"):
        assert shown in view["text"], shown
    assert "Timers pending" in view["text"] and "FINISHED" in view["text"]
    body = page.locator("body").inner_text()
    for fallback in ("Error displaying widget", "Cannot display"):
        assert fallback not in body
    assert browser.dialogs == []


def test_live_in_jupyterlab(playwright_api: Any, tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cells = ["%load_ext flowmagic", FUNCTIONS, PIPELINE, "%flow run counting"]
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    live = tmp_path / "live.ipynb"
    nbformat.write(notebook, live)
    with lab_server(live) as url, chromium_page(playwright_api) as browser:
        page = browser.page
        run_all_cells(page, url)
        # The view updates in place while the job runs, until three checkpoints are listed
        # and each of the counter's subtasks shows its keys.
        page.wait_for_function(
            """() => { const view = document.querySelector('.flowmagic-job');
                return !!view && view.querySelectorAll('table.checkpoints tr').length >= 4
                    && view.querySelectorAll('table.state-sizes tr').length >= 3; }""",
            timeout=400_000,
        )
        view = page.evaluate(VIEW)
        assert view["alt"] == TITLE and view["loaded"] and view["visible"], view
        graph = base64.b64decode(view["src"].split("base64,", 1)[1]).decode()
        assert graph.count("Busy (max): ") == 3 and "RUNNING" in view["text"]
        for shown in ("Back-pressured (ms/s)", "Input channels", "Timers pending", "Full Checkpoint Data Size"):
            assert shown in view["text"], shown
        assert browser.blocked == [] and browser.dialogs == []


def test_saved_notebook_untrusted_in_jupyterlab(saved: Path, playwright_api: Any) -> None:
    with lab_server(saved) as url, chromium_page(playwright_api) as browser:
        browser.page.goto(url, timeout=STARTUP_SECONDS * 1000)
        browser.page.wait_for_selector(".jp-OutputArea-output", timeout=STARTUP_SECONDS * 1000)
        expect_view(browser)
        assert browser.blocked == []


def test_exported_html_offline(saved: Path, playwright_api: Any) -> None:
    exported = exported_html(saved)
    with chromium_page(playwright_api, allow=("file://",)) as browser:
        browser.page.goto(exported.as_uri())
        expect_view(browser)
