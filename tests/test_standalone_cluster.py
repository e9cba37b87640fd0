"""The runtime on a real Spark standalone cluster: a master and two workers on 127.0.0.1,
started from pyspark's own launch script, so executors are separate processes. The workers
run a Python that has only pyspark (no flowmagic, none of its dependencies, no PYTHONPATH),
as a real cluster's executors do: flowmagic reaches them as the zip it ships itself as."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

# Slow end to end: `pytest -m "not e2e"` is the fast inner loop.
pytestmark = pytest.mark.e2e

SPARK_HOME = Path(__import__("pyspark").__file__).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise TimeoutError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, pyspark_only_python):
    logs = tmp_path_factory.mktemp("spark-standalone")
    port = _free_port()
    env = {
        **{name: value for name, value in os.environ.items() if name != "PYTHONPATH"},
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": pyspark_only_python,
        "SPARK_WORKER_DIR": str(logs / "work"),
    }
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    processes = []
    master_log = open(logs / "master.log", "w")  # noqa: SIM115 - closed below
    processes.append(
        subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
             "--webui-port", str(_free_port())],
            stdout=master_log, stderr=subprocess.STDOUT, env=env,
        )
    )  # fmt: skip
    url = f"spark://127.0.0.1:{port}"
    try:
        _wait_for(lambda: "ALIVE" in (logs / "master.log").read_text(), 60, "the master")
        for worker in range(2):
            log = open(logs / f"worker{worker}.log", "w")  # noqa: SIM115 - closed below
            processes.append(
                subprocess.Popen(
                    [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "1",
                     "--memory", "1g", "--webui-port", str(_free_port())],
                    stdout=log, stderr=subprocess.STDOUT, env=env,
                )
            )  # fmt: skip
        _wait_for(lambda: (logs / "master.log").read_text().count("Registering worker") >= 2, 60, "two workers")
        yield url, env
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
        master_log.close()


_JOB = textwrap.dedent(
    """
    import importlib.util, json, sys
    from pyspark.sql import SparkSession
    import flowmagic
    from flowmagic.runtime import execute

    class FailOnce(flowmagic.MapFunction):
        def open(self, ctx):
            self.doomed = ctx.get_index_of_this_subtask() == 0 and ctx.get_attempt_number() == 0
            self.seen = 0
        def map(self, value):
            self.seen += 1
            if self.doomed and self.seen == 100:
                raise RuntimeError("injected")
            return value

    spark = (SparkSession.builder.master(sys.argv[1]).appName("flowmagic-standalone")
             .config("spark.task.maxFailures", "4").config("spark.executor.memory", "512m")
             .config("spark.driver.host", "127.0.0.1").getOrCreate())
    lines = ["to be or not to be", "that is the question"] * 50
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    (env.from_collection(lines).flat_map(str.split).rebalance().map(FailOnce())
        .map(lambda w: (w, 1)).key_by(lambda t: t[0]).sum(1).print())
    result = execute(env.get_execution_graph(), spark=spark, echo=False)
    hosts = sorted({s["host"] for v in result.metrics["vertices"] for s in v["subtasks"]})
    attempts = {s["name"]: s["attempt"] for v in result.metrics["vertices"] for s in v["subtasks"]}
    workers = spark.sparkContext.parallelize(range(2), 2).map(
        lambda _: (sys.prefix, importlib.util.find_spec("mmh3") is not None)).collect()
    print(json.dumps({"printed": [line for _err, line in result.printed], "hosts": hosts, "attempts": attempts,
                      "workers": workers}))
    spark.stop()
    """
)


def test_wordcount_with_a_retry_on_a_standalone_cluster(cluster, pyspark_only_python) -> None:
    url, env = cluster
    # The driver is this Python with flowmagic installed; only the workers lack it.
    driver_env = {**env, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    run = subprocess.run([sys.executable, "-c", _JOB, url], capture_output=True, text=True, env=driver_env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    finals = {}
    for line in outcome["printed"]:
        _subtask, record = line.split("> ", 1)
        word, count = record.strip("()").split(",")
        finals[word] = max(finals.get(word, 0), int(count))
    assert finals == {"to": 100, "be": 100, "or": 50, "not": 50, "that": 50, "is": 50, "the": 50, "question": 50}
    assert len(outcome["printed"]) == 500  # one update per word, none lost or repeated by the retry
    assert len(outcome["hosts"]) >= 2  # executors are other processes than the driver
    assert 1 in outcome["attempts"].values()
    venv = str(Path(pyspark_only_python).parent.parent)
    assert outcome["workers"] == [[venv, False], [venv, False]]  # the pyspark-only Python, without mmh3
