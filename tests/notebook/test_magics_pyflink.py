"""A whole PyFlink program in a ``%%flow`` cell, unchanged, through a real IPython shell: its
``pyflink`` imports give flowmagic's modules while the cell runs (PyFlink is not installed
here), its environment is the cell's pipeline and its ``env.execute()`` runs it on Spark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from test_magics import magics, run
from test_pyflink_compat import PYFLINK_WORD_COUNT, PYFLINK_WORD_COUNT_PRINTED

from flowmagic.api.pyflink_imports import installed_pyflink


@pytest.fixture
def shell() -> InteractiveShell:
    ipython = InteractiveShell.instance()
    ipython.run_line_magic("load_ext", "flowmagic")
    ipython.reset(new_session=False)
    magics(ipython).pipelines.clear()
    return ipython


@pytest.mark.e2e
def test_a_pyflink_program_in_a_cell_runs_unchanged_and_is_the_pipeline(shell, spark) -> None:
    assert installed_pyflink() is None
    ran = run(shell, f"%%flow words\n{PYFLINK_WORD_COUNT}")
    assert ran.success, ran.out
    # env.execute() ran it on Spark: the cell printed what PyFlink 2.3.0 printed.
    assert ran.captured.stdout == PYFLINK_WORD_COUNT_PRINTED.lstrip("\n")
    pipeline = shell.user_ns["words"]
    assert pipeline.stream_graph.job_type == "BATCH"
    assert [node.name for node in pipeline.stream_graph.nodes.values()] == [
        "Source: Collection Source",
        "Flat Map",
        "Map",
        "Keyed Reduce",
        "Sink: Print to Std. Out",
    ]
    saved, _live = ran.displayed
    assert saved["text/html"].count("<img") == 4
    # The imports were flowmagic's, and only while the cell ran.
    assert shell.user_ns["StreamExecutionEnvironment"].__module__ == "flowmagic.datastream"
    assert not [name for name in sys.modules if name == "pyflink" or name.startswith("pyflink.")]
    assert "env" not in shell.user_ns
    # The pipeline runs again from %flow run, with the cell's functions shipped to Spark.
    again = run(shell, "%flow run words")
    assert again.success, again.out
    assert "(dog,3)" in again.out


def test_a_pyflink_cell_that_only_builds_its_program_is_still_the_pipeline(shell) -> None:
    cell = (
        PYFLINK_WORD_COUNT.replace("env.execute()", "").replace("env = ", "flink_env = ").replace("env.", "flink_env.")
    )
    ran = run(shell, f"%%flow built --show none\n{cell}")
    assert ran.success, ran.out
    assert ran.captured.stdout == ""
    assert len(shell.user_ns["built"].stream_graph.nodes) == 5


def test_a_pyflink_module_flowmagic_lacks_is_a_short_error(shell) -> None:
    ran = run(shell, "%%flow table\nfrom pyflink.table.udf import udf\n")
    assert not ran.success and isinstance(ran.error, UsageError)
    assert "pyflink.table.udf has no flowmagic counterpart" in str(ran.error)


def test_an_installed_pyflink_is_left_alone_and_the_error_says_so(shell, tmp_path: Path) -> None:
    (tmp_path / "pyflink").mkdir()
    (tmp_path / "pyflink" / "__init__.py").write_text("")
    sys.path.insert(0, str(tmp_path))
    try:
        ran = run(shell, "%%flow real\nfrom pyflink.datastream import StreamExecutionEnvironment\n")
    finally:
        sys.path.remove(str(tmp_path))
    assert not ran.success and isinstance(ran.error, UsageError)
    message = str(ran.error)
    assert "PyFlink is installed in this kernel" in message and str(tmp_path) in message
    assert "Replace `pyflink` with `flowmagic`" in message
