"""A SparkContext's first bounded job warms it for continuous jobs: a throwaway streaming
query of the continuous mode's clock runs one batch in the background, then stops, leaving
nothing behind. Needs a fresh SparkContext, hence a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_PROGRAM = textwrap.dedent(
    """
    import json, os, sys, time
    from pyspark import SparkFiles
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQueryListener
    import flowmagic
    from flowmagic.runtime import execute

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.python.authenticate.socketTimeout", "120s").getOrCreate())
    spark.sparkContext.setLogLevel("OFF")
    events = {"started": [], "batches": [], "terminated": 0}

    class Recorder(StreamingQueryListener):
        def onQueryStarted(self, event):
            events["started"].append(event.name)
        def onQueryProgress(self, event):
            events["batches"].append([event.progress.name, event.progress.batchId])
        def onQueryIdle(self, event):
            pass
        def onQueryTerminated(self, event):
            events["terminated"] += 1

    spark.streams.addListener(Recorder())
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_collection([1, 2, 3]).map(lambda x: x * 2).add_sink(lambda record: None)
    execute(env.get_execution_graph(), echo=False)
    deadline = time.time() + 240
    while time.time() < deadline and not (events["terminated"] and not spark.streams.active):
        time.sleep(0.2)
    events["active"] = len(spark.streams.active)
    events["left"] = os.listdir(SparkFiles.getRootDirectory())
    print(json.dumps(events))
    spark.stop()
    """
)


@pytest.mark.e2e
def test_the_first_bounded_job_warms_the_context_for_continuous_jobs() -> None:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", _PROGRAM], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    events = json.loads(run.stdout.strip().splitlines()[-1])
    assert events["started"] == ["flowmagic-warm-up"]
    assert ["flowmagic-warm-up", 0] in events["batches"]
    assert events["terminated"] == 1 and events["active"] == 0
    # Its checkpoint went with it; the shipped flowmagic stays for the context's jobs.
    assert "flowmagic-warm-up" not in events["left"]
