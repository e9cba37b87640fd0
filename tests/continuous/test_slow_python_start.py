"""A busy machine: Spark waits a fixed 10 s for the Python process that serves a stream's
source on the driver to connect back. A continuous job whose first such process starts too
late starts its query again, and runs, without counting it as a failure of the job.

flowmagic's own sources need no such process (Spark's stream only ticks, with a JVM source);
a user's Python data source read through ``from_spark`` does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

# Python runs sitecustomize at start-up, before any module: the first process that serves a
# stream's source (and only it) is held past Spark's 10 s, as a machine at full load holds it.
_SLOW_START = """
import os, sys, time
_marker = os.environ.get("FLOWMAGIC_TEST_SLOW_SOURCE_RUNNER")
if _marker and "python_streaming_source_runner" in " ".join(sys.orig_argv):
    try:
        os.remove(_marker)
    except FileNotFoundError:
        pass
    else:
        time.sleep(13)
"""

_JOB = textwrap.dedent("""
    import sys
    import time
    from pyspark.sql import SparkSession

    import flowmagic
    from flowmagic import compile as passes
    from flowmagic.runtime import start_continuous

    spark = (SparkSession.builder.master("local[2]").appName("flowmagic-slow-python")
             .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
    spark.sparkContext.setLogLevel("OFF")
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

    class Ticks(DataSourceStreamReader):
        def initialOffset(self):
            return {"tick": 0}

        def latestOffset(self):
            return {"tick": int(time.time() * 10)}

        def partitions(self, start, end):
            return [InputPartition(0)]

        def read(self, partition):
            yield (1,)

    class TickSource(DataSource):
        @classmethod
        def name(cls):
            return "ticks"

        def schema(self):
            return "value INT"

        def streamReader(self, schema):
            return Ticks()

    spark.dataSource.register(TickSource)
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.from_spark(spark.readStream.format("ticks").load()).map(lambda row: row.value).add_sink(lambda i: None)
    graph = passes.build(env.get_stream_graph("slow python")).execution_graph
    job = start_continuous(graph, options=env.continuous_options())
    deadline = time.time() + 240
    while job.epochs < 3 and time.time() < deadline and not job.get_job_status().is_globally_terminal:
        time.sleep(0.2)
    print("EPOCHS", job.epochs, "RESTARTS", job.restarts, "STATUS", job.get_job_status(), flush=True)
    job.cancel()
    spark.stop()
""")


def test_a_job_whose_source_process_connects_back_late_starts_again_and_runs(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SLOW_START)
    marker = tmp_path / "slow-once"
    marker.write_text("")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p),
        "PYSPARK_PYTHON": sys.executable,
        "FLOWMAGIC_TEST_SLOW_SOURCE_RUNNER": str(marker),
    }
    run = subprocess.run(
        [sys.executable, "-c", _JOB],
        capture_output=True,
        text=True,
        env=env,
        timeout=420,
        cwd=str(Path(__file__).parents[2]),
    )
    assert not marker.exists(), f"the source's Python process was never held up:\n{run.stderr[-3000:]}"
    assert "EPOCHS" in run.stdout, run.stderr[-3000:]
    epochs, restarts, status = run.stdout.split("EPOCHS", 1)[1].split()[0::2]
    assert int(epochs) >= 3 and restarts == "0" and status == "RUNNING", run.stdout + run.stderr[-3000:]
