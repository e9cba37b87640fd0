"""The magics in a notebook executed by nbclient on a real kernel, and its saved outputs under nbval.

``notebooks_for_tests/flow_demo.ipynb`` is saved with the outputs the kernel produced; nbval
re-executes it and compares them, which holds only if every output (the ``text/plain``
lines, the pictures, the explain text) is deterministic. After
changing what the notebook shows, regenerate it with::

    .venv/bin/python tests/notebook/test_magics_notebook.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from flowmagic.widgets import LEVELS

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = Path(__file__).parents[1] / "notebooks_for_tests" / "flow_demo.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

CELLS = [
    ("%load_ext flowmagic", []),
    (
        "%%flow wordcount --parallelism 4\n"
        'text = env.from_collection(["to be or not to be", "that is the question"])\n'
        "counts = (text.flat_map(lambda line: [(w, 1) for w in line.split()])\n"
        "              .key_by(lambda t: t[0])\n"
        "              .sum(1))\n"
        "counts.print()",
        [],
    ),
    ("%flow list", []),
    ("%flow explain wordcount", []),
    ("%%flow broken\nstream = env.from_sequence(1, 3)\n1 / 0", ["raises-exception"]),
    ("%%flow wordcount\nenv.from_collection([])", ["raises-exception"]),
    ("wordcount  # noqa: F821 - bound by %%flow", []),
]


def execute(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Run ``notebook`` on a fresh python3 kernel that imports this checkout's flowmagic."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=120,
        # Widget state would copy every SVG into the notebook's metadata; the outputs have them.
        store_widget_state=False,
        resources={"metadata": {"path": str(ROOT)}},
    )
    # Cells tagged "raises-exception" may fail; any other error fails the run.
    return client.execute(env=env)


def fresh_notebook() -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source, metadata={"tags": tags}) for source, tags in CELLS]
    return notebook


@pytest.fixture(scope="module")
def executed() -> nbformat.NotebookNode:
    return execute(fresh_notebook())


def outputs(notebook: nbformat.NotebookNode, index: int) -> list[dict]:
    return notebook.cells[index].outputs


def test_the_flow_cell_displays_pictures_then_the_widget(executed) -> None:
    saved, live = outputs(executed, 1)
    assert saved.output_type == live.output_type == "display_data"
    assert saved.data["text/plain"] == "<FlowGraphs 'wordcount': 4 stream nodes, 3 job vertices, 9 subtasks>"
    assert saved.data["text/html"].count('<img src="data:image/svg+xml;base64,') == 4
    svg = saved.data["image/svg+xml"]
    assert svg.startswith("<svg") and all(f"<title>{title}</title>" in svg for title in LEVELS.values())
    assert set(live.data) == {WIDGET_VIEW, "text/plain"} and live.data["text/plain"] == ""


def test_list_and_explain(executed) -> None:
    [table] = outputs(executed, 2)
    assert table.output_type == "execute_result"
    assert table.data["text/plain"].splitlines()[1].split() == ["wordcount", "STREAMING", "4", "3", "9", "1-4", "-"]
    [text] = outputs(executed, 3)
    assert text.name == "stdout" and text.text.startswith("== Stream Graph ==\n")


def test_errors_are_short_and_point_at_the_cell(executed) -> None:
    [error] = outputs(executed, 4)
    assert error.output_type == "error" and error.ename == "ZeroDivisionError"
    traceback = "\n".join(error.traceback)
    assert "<flow-cell broken>" in traceback and "flowmagic/" not in traceback
    [usage] = outputs(executed, 5)  # IPython prints a UsageError, without a traceback
    assert usage.name == "stderr"
    assert usage.text == (
        "UsageError: %%flow wordcount, line 1: ProgramError: Collection must not be empty\n"
        "    env.from_collection([])\n"
    )


def test_a_failed_cell_leaves_the_earlier_pipeline(executed) -> None:
    [result] = outputs(executed, 6)
    assert result.data["text/plain"] == "<Pipeline 'wordcount': STREAMING, 4 operators, 3 job vertices, 9 subtasks>"


def test_saved_outputs_are_reproduced_under_nbval() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--nbval", "-p", "no:cacheprovider", str(NOTEBOOK)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(CELLS)} passed" in result.stdout


if __name__ == "__main__":
    nbformat.write(execute(fresh_notebook()), NOTEBOOK)
    print(f"Wrote {NOTEBOOK}")
