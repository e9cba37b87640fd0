"""A real browser: JupyterLab runs a notebook in headless Chromium and shows the graph widget.

The set-up installs what it needs when absent: Debian's ``chromium`` (``apt-get``, as root)
and the ``playwright`` driver (pip). Playwright never downloads a browser: it drives
``/usr/bin/chromium``. The tests skip, saying why, only when Chromium cannot be installed.
The page may reach 127.0.0.1 only; any other request is blocked and reported as a failure.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Slow end to end: `pytest -m "not e2e"` is the fast inner loop.
pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = Path(__file__).parents[1] / "notebooks_for_tests" / "browser_demo.ipynb"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STARTUP_SECONDS = 90


def _install_chromium() -> str | None:
    """Install Debian's chromium if absent; the reason it is unavailable, or None."""
    if CHROMIUM.exists():
        return None
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"{CHROMIUM} is missing and installing it needs root and apt-get (apt-get install -y chromium)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium"]):
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200, check=False)
        if result.returncode != 0 and command[1] == "install":
            return f"`apt-get install -y chromium` failed: {result.stderr.strip()[-500:]}"
    return None if CHROMIUM.exists() else f"`apt-get install -y chromium` did not provide {CHROMIUM}"


def _sync_playwright() -> Any:
    try:
        module = importlib.import_module("playwright.sync_api")
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "playwright"], check=True, timeout=600)
        module = importlib.import_module("playwright.sync_api")
    return module


@pytest.fixture(scope="module")
def playwright_api() -> Any:
    reason = _install_chromium()
    if reason is not None:
        pytest.skip(f"No Chromium for the browser test: {reason}.")
    return _sync_playwright()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Browser:
    """The page, plus what it tried that it should not have: outside requests, dialogs."""

    def __init__(self, page: Any):
        self.page = page
        self.blocked: list[str] = []
        self.dialogs: list[str] = []


@contextlib.contextmanager
def lab_server(notebook: Path) -> Iterator[str]:
    """JupyterLab on 127.0.0.1 with a random token, serving a copy of ``notebook``; yields its URL.

    Settings, workspaces, runtime files and the notebook signature database live in a
    temporary directory, so the user's JupyterLab state (theme, kernel choices, trusted
    notebooks) cannot change what the browser sees.
    """
    home = Path(tempfile.mkdtemp(prefix="flowmagic-lab-"))
    notebooks = home / "notebooks"
    notebooks.mkdir()
    shutil.copy(notebook, notebooks / notebook.name)
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.token={token}",
        f"--ServerApp.root_dir={notebooks}",
        # window.jupyterapp: the test drives JupyterLab through its own commands.
        "--LabApp.expose_app_in_browser=True",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = (home / "lab.log").open("w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited with {server.returncode}:\n{(home / 'lab.log').read_text()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start:\n{(home / 'lab.log').read_text()}")
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/lab/tree/{notebook.name}?token={token}"
    finally:
        server.terminate()  # Jupyter shuts its kernels down on SIGTERM.
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait()
        log.close()
        shutil.rmtree(home, ignore_errors=True)


@contextlib.contextmanager
def chromium_page(
    playwright_api: Any, *, allow: tuple[str, ...] = ("http://127.0.0.1:", "ws://127.0.0.1:")
) -> Iterator[Browser]:
    """A page of a fresh headless Chromium that may fetch only URLs starting with ``allow``:
    any other request is blocked and recorded in :attr:`Browser.blocked`."""
    user_data = tempfile.mkdtemp(prefix="flowmagic-chromium-")
    with playwright_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            user_data,
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 1000},
        )
        page = context.pages[0] if context.pages else context.new_page()
        state = Browser(page)

        def only_allowed(route: Any) -> None:
            if route.request.url.startswith(allow):
                route.continue_()
            else:
                state.blocked.append(route.request.url)
                route.abort()

        context.route("**/*", only_allowed)
        page.on("dialog", lambda dialog: (state.dialogs.append(dialog.message), dialog.dismiss()))
        try:
            yield state
        finally:
            context.close()
            shutil.rmtree(user_data, ignore_errors=True)


@pytest.fixture(scope="module")
def lab(playwright_api: Any) -> Iterator[str]:
    """JupyterLab serving a copy of the test notebook."""
    with lab_server(NOTEBOOK) as url:
        yield url


@pytest.fixture(scope="module")
def browser(playwright_api: Any, lab: str) -> Iterator[Browser]:
    """The test notebook opened in Chromium, all cells run, the four graph widgets shown."""
    with chromium_page(playwright_api) as state:
        run_all_cells(state.page, lab)
        state.page.wait_for_function(
            "document.querySelectorAll('.flowmagic-graphs').length === 4", timeout=STARTUP_SECONDS * 1000
        )
        yield state


def run_all_cells(page: Any, url: str) -> None:
    """Open the notebook at ``url`` in JupyterLab, wait for its kernel, and start every cell."""
    page.goto(url, timeout=STARTUP_SECONDS * 1000)
    page.wait_for_function(
        "window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext",
        timeout=STARTUP_SECONDS * 1000,
    )
    _wait_for_kernel(page)
    # Not awaited: the command's promise settles only when every cell has run.
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def exported_html(notebook: Path) -> Path:
    """The notebook as ``nbconvert --to html`` exports it, beside it."""
    result = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", str(notebook)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return notebook.with_suffix(".html")


def _wait_for_kernel(page: Any) -> None:
    """Wait until the notebook's kernel is idle, accepting the kernel dialog if one is shown."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        status = page.evaluate(
            "() => { const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel;"
            " return kernel ? kernel.status : null; }"
        )
        if status == "idle":
            return
        accept = page.locator(".jp-Dialog .jp-mod-accept")
        if accept.count():
            accept.first.click()
        time.sleep(0.25)
    pytest.fail("The notebook's kernel did not start.")


def graph_texts(widget: Any, level: str) -> list[str]:
    return widget.locator(f".flowmagic-level-{level} svg g.node text").evaluate_all(
        "texts => texts.map(text => text.textContent.replaceAll('\\u00a0', ' '))"
    )


def test_the_four_tabs_show_svg_graphs(browser: Browser) -> None:
    wordcount = browser.page.locator(".flowmagic-graphs").first
    tabs = wordcount.locator(".lm-TabBar-tab")
    assert tabs.all_inner_texts() == ["StreamGraph", "JobGraph", "ExecutionGraph", "Physical"]
    assert "lm-mod-current" in tabs.nth(1).get_attribute("class")
    assert wordcount.locator(".flowmagic-level-job svg").is_visible()
    assert graph_texts(wordcount, "job") == [
        "Source: Collection Source",
        "bc764cd8 · p=1",
        "Flat Map",
        "0a448493 · p=4",
        "Keyed Aggregation",
        "→ Sink: Print to Std. Out",
        "e70bbd79 · p=4",
    ]
    # The other levels are drawn as well, in their (hidden) tabs.
    assert "Sink: Print to Std. Out" in graph_texts(wordcount, "stream")
    assert "Flat Map (4/4)" in graph_texts(wordcount, "execution")
    assert "Flat Map (4/4)" in graph_texts(wordcount, "physical")


def test_switching_tabs(browser: Browser) -> None:
    wordcount = browser.page.locator(".flowmagic-graphs").first
    for title, level, text in [
        ("StreamGraph", "stream", "id 2 · p=4"),
        ("ExecutionGraph", "execution", "Keyed Aggregation -> Sink: Print to Std. Out (1/4)"),
        ("Physical", "physical", "in: 1 gate, 4 channels (4 local)"),
        ("JobGraph", "job", "→ Sink: Print to Std. Out"),
    ]:
        wordcount.locator(".lm-TabBar-tab", has_text=title).click()
        shown = wordcount.locator(f".flowmagic-level-{level} svg")
        shown.wait_for(state="visible")
        assert text in graph_texts(wordcount, level)
        hidden = [other for other in ("stream", "job", "execution", "physical") if other != level]
        assert not any(wordcount.locator(f".flowmagic-level-{other} svg").is_visible() for other in hidden)


def test_details_on_hover_and_without_a_mouse(browser: Browser) -> None:
    wordcount = browser.page.locator(".flowmagic-graphs").first
    wordcount.locator(".lm-TabBar-tab", has_text="ExecutionGraph").click()
    level = wordcount.locator(".flowmagic-level-execution")
    # Hovering shows an element's <title>: the browser's own tooltip, no script involved.
    titles = level.locator("svg g.node > title").all_text_contents()
    assert any("Subtask: Flat Map (2/4)" in title and "Vertex id: 0a448493" in title for title in titles)
    level.locator("select").select_option(label="Flat Map [0a448493]")
    details = level.locator(".flowmagic-details")
    details.filter(has_text="Flat Map (4/4) reads Source: Collection Source subtasks 0").wait_for()
    assert "0a448493b4782967b150582570326227" in details.inner_text()


def test_names_show_literally_and_run_nothing(browser: Browser) -> None:
    page = browser.page
    nasty = page.locator(".flowmagic-graphs").nth(1)
    assert nasty.locator(".lm-TabBar-tab").all_inner_texts() == ["StreamGraph"]
    texts = graph_texts(nasty, "stream")
    assert '<img src=x onerror="window.flowmagicPwned = 1">' in texts
    assert "<script>window.flowmagicPwned = 2</script> & $x^2$ 😀" in texts
    assert page.evaluate("window.flowmagicPwned") is None
    assert nasty.locator("img, script").count() == 0
    assert nasty.locator("mjx-container, .MathJax").count() == 0  # "$x^2$" is not typeset
    assert browser.dialogs == []


def test_nothing_is_fetched_from_the_network(browser: Browser) -> None:
    assert browser.blocked == []


def test_dark_theme_is_legible(browser: Browser) -> None:
    page = browser.page
    page.evaluate("() => { window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'}); }")
    page.wait_for_function(
        "document.body.dataset.jpThemeLight === 'false' && !document.querySelector('#jupyterlab-splash')",
        timeout=60_000,
    )
    wordcount = page.locator(".flowmagic-graphs").first
    wordcount.locator(".lm-TabBar-tab", has_text="JobGraph").click()
    colours = wordcount.locator(".flowmagic-level-job svg").evaluate(
        """svg => ({
            background: getComputedStyle(svg.querySelector(':scope > g > polygon')).fill,
            edgeLabel: getComputedStyle(svg.querySelector('g.edge text')).fill,
            edge: getComputedStyle(svg.querySelector('g.edge path')).stroke,
            nodeText: getComputedStyle(svg.querySelector('g.node text')).fill,
            page: getComputedStyle(document.body).backgroundColor,
        })"""
    )
    assert colours["background"] in ("transparent", "rgba(0, 0, 0, 0)")
    assert _luminance(colours["page"]) < 0.2
    # Edges and their labels take the theme's light foreground; node text stays dark on its light fill.
    assert _luminance(colours["edgeLabel"]) > 0.6 and _luminance(colours["edge"]) > 0.3
    assert _luminance(colours["nodeText"]) < 0.2


def _luminance(css_colour: str) -> float:
    """Relative luminance (0 black, 1 white) of ``rgb(...)``/``rgba(...)``, alpha ignored."""
    channels = [float(part) / 255 for part in css_colour[css_colour.index("(") + 1 : -1].split(",")[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_live_widgets_hide_their_pictures(browser: Browser) -> None:
    # Each display is a picture of every level (for saved copies), then the widget; while the
    # widget is drawn, the pictures of its output area are hidden.
    statics = browser.page.locator(".flowmagic-static")
    assert statics.count() == 4
    assert not any(statics.nth(index).is_visible() for index in range(4))
    assert browser.page.locator(".flowmagic-graphs").first.is_visible()


def test_a_wide_graph_zooms_scrolls_and_expands(browser: Browser) -> None:
    wide = browser.page.locator(".flowmagic-graphs").nth(2)
    level = wide.locator(".flowmagic-level-execution")
    box = level.locator(".flowmagic-svg")
    texts = graph_texts(wide, "execution")
    assert "… 12 more" in texts and "Source: Sequence Source -> Map (16/16)" in texts
    assert not any("(9/16)" in text for text in texts)

    def sizes() -> dict[str, float]:
        return box.evaluate(
            """box => ({scrollWidth: box.scrollWidth, clientWidth: box.clientWidth,
                        svgWidth: box.querySelector('svg').getBoundingClientRect().width,
                        svgHeight: box.querySelector('svg').getBoundingClientRect().height})"""
        )

    natural = sizes()
    level.get_by_role("button", name="200%", exact=True).click()
    browser.page.wait_for_function(
        f"document.querySelectorAll('.flowmagic-graphs')[2].querySelector('.flowmagic-svg svg')"
        f".getBoundingClientRect().width > {natural['svgWidth'] * 1.9}"
    )
    zoomed = sizes()
    # Larger than its box: the box scrolls, and its right end can be reached (nothing is clipped).
    assert zoomed["scrollWidth"] > zoomed["clientWidth"]
    box.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
    right = box.evaluate(
        """box => { const svg = box.querySelector('svg').getBoundingClientRect();
                    const view = box.getBoundingClientRect();
                    return svg.right <= view.right + 1 && svg.right >= view.right - 20; }"""
    )
    assert right
    level.get_by_role("button", name="Fit", exact=True).click()
    browser.page.wait_for_function(
        "(() => { const box = document.querySelectorAll('.flowmagic-graphs')[2].querySelector('.flowmagic-svg');"
        " return Math.abs(box.querySelector('svg').getBoundingClientRect().width - box.clientWidth) < 2; })()"
    )
    assert sizes()["scrollWidth"] <= sizes()["clientWidth"]
    level.get_by_role("button", name="100%", exact=True).click()
    level.get_by_label("Draw all 32 subtasks of the 2 collapsed vertices").check()
    level.locator("svg g.node text", has_text="Source: Sequence Source -> Map (9/16)").wait_for()
    assert sizes()["svgHeight"] > 2.5 * natural["svgHeight"]
    # Taller than its box: it scrolls down too.
    assert box.evaluate("box => box.clientHeight <= 640 && box.scrollHeight > box.clientHeight")


def test_the_physical_tab_shows_taskmanagers_slots_and_channels(browser: Browser) -> None:
    wordcount = browser.page.locator(".flowmagic-graphs").first
    wordcount.locator(".lm-TabBar-tab", has_text="Physical").click()
    level = wordcount.locator(".flowmagic-level-physical")
    level.locator("svg").wait_for(state="visible")
    clusters = level.locator("svg g.cluster > title").all_text_contents()
    assert "TaskManager 1 · 4 of 4 slots used" in clusters
    assert sum(1 for title in clusters if title.startswith("Slot: ")) == 4
    titles = level.locator("svg g.node > title").all_text_contents()
    assert any("Task: Flat Map (2/4)" in title and "Runs in: TaskManager 1" in title for title in titles)
    level.locator("select").select_option(label="Slot 2 (TaskManager 1, default)")
    details = level.locator(".flowmagic-details")
    details.filter(has_text="Flat Map (2/4)").wait_for()
    assert "in: 1 gate, 4 channels (4 local)" in details.inner_text()


def test_the_physical_tab_shows_flinks_error_when_slots_are_missing(browser: Browser) -> None:
    seed = browser.page.locator(".flowmagic-graphs").nth(3)
    seed.scroll_into_view_if_needed()
    assert seed.locator(".lm-TabBar-tab").all_text_contents() == ["Physical"]
    error = seed.locator(".flowmagic-level-physical .flowmagic-error")
    error.wait_for(state="visible")
    text = error.text_content()
    assert "NoResourceAvailableException: Could not acquire the minimum required resources." in text
    assert "The job needs 9 slots = 1 (default) + 4 (flatmap_sg) + 4 (sum_sg)" in text
    assert seed.locator(".flowmagic-level-physical svg").count() == 0
