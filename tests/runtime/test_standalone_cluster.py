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
             .config("spark.python.authenticate.socketTimeout", "120s").config("spark.network.timeout", "600s")
             .config("spark.executor.heartbeatInterval", "60s")
             .config("spark.driver.host", "127.0.0.1").getOrCreate())
    lines = ["to be or not to be", "that is the question"] * 50
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    (env.from_collection(lines).flat_map(str.split).rebalance().map(FailOnce())
        .map(lambda w: (w, 1)).key_by(lambda t: t[0]).sum(1).print())
    graph = env.get_execution_graph()
    result = execute(graph, spark=spark, echo=False)
    hosts = sorted({s.host for v in result.metrics.vertices for s in v.subtasks})
    attempts = {s.name: s.attempt for v in result.metrics.vertices for s in v.subtasks}
    from flowmagic import compile as passes
    from flowmagic.widgets.job_view import spark_placement
    placement = spark_placement(passes.deploy(graph), result.metrics)
    crossing = [(placement.subtasks[c.producer].executor != placement.subtasks[c.consumer].executor)
                == c.crosses_executor for c in placement.channels]
    spark_executors = spark.sparkContext._jsc.sc().getExecutorIds().mkString(",").split(",")
    workers = spark.sparkContext.parallelize(range(2), 2).map(
        lambda _: (sys.prefix, importlib.util.find_spec("mmh3") is not None)).collect()
    print(json.dumps({"printed": [line for _err, line in result.printed], "hosts": hosts, "attempts": attempts,
                      "workers": workers, "executors": placement.executors, "spark_executors": spark_executors,
                      "crossing": crossing, "counts": placement.channel_counts()}))
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
    # Where subtasks ran, by Spark's executor ids (the workers' executors, not the driver), and
    # which channels crossed executors.
    assert outcome["executors"] and set(outcome["executors"]) <= set(outcome["spark_executors"])
    assert outcome["crossing"] and all(outcome["crossing"])
    if len(outcome["executors"]) == 2:
        assert outcome["counts"]["CROSS_EXECUTOR"] > 0
    venv = str(Path(pyspark_only_python).parent.parent)
    assert outcome["workers"] == [[venv, False], [venv, False]]  # the pyspark-only Python, without mmh3


# A continuous job's driver that kills, mid-epoch, a Python worker then an executor of the
# job's program (in place of PROGRAM: it writes to ``output`` and names its job ``job``).
_KILLS = textwrap.dedent(
    """
    import json, os, signal, statistics, sys, threading, time, urllib.request
    from pyspark.sql import SparkSession
    import flowmagic
    from flowmagic import compile as passes
    from flowmagic.vocabulary.rolling_policy import RollingPolicy
    from flowmagic.runtime import start_continuous

    url, output, checkpoints = sys.argv[1:4]
    spark = (SparkSession.builder.master(url).appName("flowmagic-continuous-kills")
             .config("spark.locality.wait", "0").config("spark.task.maxFailures", "8")
             .config("spark.executor.memory", "512m")
             .config("spark.python.authenticate.socketTimeout", "120s").config("spark.network.timeout", "600s")
             .config("spark.executor.heartbeatInterval", "60s")
             .config("spark.driver.host", "127.0.0.1").getOrCreate())

    def processes():
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as file:
                        command = file.read().replace(b"\\0", b" ").decode()
                    with open(f"/proc/{pid}/stat") as file:
                        parent = int(file.read().rsplit(")", 1)[1].split()[1])
                except OSError:
                    continue
                yield int(pid), parent, command

    def executors(executor_id):
        # This application's executor only (other jobs may run on this machine).
        marks = (f"--app-id {spark.sparkContext.applicationId} ", f"--executor-id {executor_id} ")
        return [pid for pid, _parent, command in processes() if "CoarseGrainedExecutorBackend" in command
                and all(mark in command + " " for mark in marks)]

    def python_workers(executor_id):
        # An executor's daemon forks one worker per task; killing the forks fails their tasks.
        ours = set(executors(executor_id))
        daemons = {pid for pid, parent, command in processes() if parent in ours and "pyspark.daemon" in command}
        return [pid for pid, parent, _command in processes() if parent in daemons]

    def running_executor():
        # Where a task of the job runs now, from the driver's REST API.
        api = f"{spark.sparkContext.uiWebUrl}/api/v1/applications/{spark.sparkContext.applicationId}"
        for stage in spark.sparkContext.statusTracker().getActiveStageIds():
            try:
                with urllib.request.urlopen(f"{api}/stages/{stage}/0/taskList?status=RUNNING") as answer:
                    tasks = json.load(answer)
            except OSError:
                continue
            if tasks:
                return tasks[0]["executorId"]
        return None

    def slow(pair):
        time.sleep(0.002)  # tasks last long enough to be killed while they run
        return pair

    PROGRAM

    ends = []
    def watch():
        seen = 0
        while not job.get_job_status().is_globally_terminal:
            if job.epochs != seen:
                seen = job.epochs
                ends.append(time.time())
            time.sleep(0.01)
    threading.Thread(target=watch, daemon=True).start()

    def wait_epochs(count, timeout=180):
        deadline = time.time() + timeout
        while job.epochs < count:
            if job.get_job_status().is_globally_terminal or time.time() > deadline:
                job.wait()
                raise SystemExit(f"no epoch {count}: {job}")
            time.sleep(0.01)

    def failed_tasks():
        tracker = spark.sparkContext.statusTracker()
        stages = [stage for job_id in tracker.getJobIdsForGroup(f"flowmagic-{job.job_id}")
                  for stage in tracker.getJobInfo(job_id).stageIds]
        return sum(info.numFailedTasks for info in map(tracker.getStageInfo, stages) if info is not None)

    def kill_mid_epoch(pids_of):
        # Into a running task (which may end between the look and the kill: then again); the
        # first epoch end after the kill counts its cost.
        for _attempt in range(5):
            wait_epochs(job.epochs + 1)
            while True:
                time.sleep(0.02)
                executor = running_executor()
                pids = pids_of(executor) if executor is not None else []
                if pids:
                    break
            failed = failed_tasks()
            killed_at = time.time()
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            before = len(ends)
            wait_epochs(job.epochs + 2)
            if failed_tasks() > failed:
                return killed_at, before
        raise SystemExit("no kill failed a running task")

    wait_epochs(6)
    kills = {"python_worker": kill_mid_epoch(python_workers)}
    wait_epochs(job.epochs + 4)
    kills["executor"] = kill_mid_epoch(executors)
    wait_epochs(job.epochs + 3)
    job.stop_with_savepoint(os.path.join(checkpoints, "savepoint"))
    periods = [b - a for a, b in zip(ends, ends[1:])]
    costs = {}
    for name, (killed_at, before) in kills.items():
        undisturbed = statistics.median(periods[:before - 1])
        costs[name] = ends[before] - killed_at - undisturbed
    failed = failed_tasks()
    print(json.dumps({"status": str(job.get_job_status()), "costs": costs, "failed_tasks": failed,
                      "median_epoch": statistics.median(periods)}))
    spark.stop()
    """
)


_DATASTREAM_PROGRAM = textwrap.dedent(
    """
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.enable_checkpointing(1000)
    env.get_checkpoint_config().set_checkpoint_storage(f"file://{checkpoints}")
    sink = (flowmagic.FileSink.for_row_format(output, flowmagic.Encoder.simple_string_encoder())
            .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy()).build())
    (env.from_datagen(lambda i: (f"k{i % 10}", 1), rows_per_second=300).key_by(lambda p: p[0]).sum(1)
        .map(slow).sink_to(sink))
    job = start_continuous(passes.build(env.get_stream_graph("kills")).execution_graph, spark=spark)
    """
)
_CONTINUOUS_JOB = _KILLS.replace("PROGRAM\n", _DATASTREAM_PROGRAM.lstrip("\n"))

# The same kills in a SQL GROUP BY: its changelog (Rows with their kinds) into a FileSink.
_SQL_PROGRAM = textwrap.dedent(
    """
    from flowmagic.table import StreamTableEnvironment

    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.enable_checkpointing(1000)
    env.get_checkpoint_config().set_checkpoint_storage(f"file://{checkpoints}")
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql("CREATE TABLE src (k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '300', "
                      "'fields.k.min' = '0', 'fields.k.max' = '9')")
    changes = t_env.to_changelog_stream(t_env.sql_query("SELECT k, COUNT(*) AS c FROM src GROUP BY k"))
    sink = (flowmagic.FileSink.for_row_format(output, flowmagic.Encoder.simple_string_encoder())
            .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy()).build())
    changes.map(lambda row: f"{row.get_row_kind()},{row.k},{row.c}").map(slow).sink_to(sink)
    job = start_continuous(passes.build(env.get_stream_graph("sql-kills")).execution_graph, spark=spark)
    """
)
_SQL_CONTINUOUS_JOB = _KILLS.replace("PROGRAM\n", _SQL_PROGRAM.lstrip("\n"))


def test_a_continuous_file_sink_job_survives_a_killed_python_worker_and_a_killed_executor(cluster, tmp_path) -> None:
    url, env = cluster
    output, checkpoints = tmp_path / "out", tmp_path / "checkpoints"
    # Continuous jobs' subtasks keep their state through pyarrow, which the workers need:
    # this job's workers run this Python.
    driver_env = {**env, "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "PYSPARK_PYTHON": sys.executable}
    run = subprocess.run(
        [sys.executable, "-c", _CONTINUOUS_JOB, url, str(output), str(checkpoints)],
        capture_output=True, text=True, env=driver_env, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-5000:]
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome["status"] == "FINISHED"
    assert outcome["failed_tasks"] >= 2, outcome  # both kills failed running tasks, which Spark retried
    counts: dict[str, list[int]] = {}
    for path in output.rglob("*"):  # the files of the hour's bucket directory
        assert not path.name.startswith("."), f"left in progress: {path}"
        if path.is_dir():
            continue
        for line in path.read_text().splitlines():
            key, value = line.strip("()").split(",")  # Java's Tuple2.toString(): (k0,1)
            counts.setdefault(key, []).append(int(value))
    # Every key's running count is there once from 1 on: nothing lost, nothing written twice.
    assert len(counts) == 10
    for key, values in counts.items():
        assert sorted(values) == list(range(1, len(values) + 1)), key
    print("kill costs (s past an undisturbed epoch):", outcome["costs"], "median epoch:", outcome["median_epoch"])


def test_a_continuous_sql_aggregate_survives_a_killed_python_worker_and_loses_and_repeats_nothing(
    cluster, tmp_path
) -> None:
    url, env = cluster
    output, checkpoints = tmp_path / "out", tmp_path / "checkpoints"
    driver_env = {**env, "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "PYSPARK_PYTHON": sys.executable}
    run = subprocess.run(
        [sys.executable, "-c", _SQL_CONTINUOUS_JOB, url, str(output), str(checkpoints)],
        capture_output=True, text=True, env=driver_env, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-5000:]
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome["status"] == "FINISHED"
    assert outcome["failed_tasks"] >= 2, outcome  # both kills failed running tasks, which Spark retried
    changes: dict[str, dict[str, list[int]]] = {}
    for path in output.rglob("*"):
        assert not path.name.startswith("."), f"left in progress: {path}"
        if path.is_dir():
            continue
        for line in path.read_text().splitlines():
            kind, key, count = line.split(",")
            changes.setdefault(key, {}).setdefault(kind, []).append(int(count))
    # Each key's changelog is there once: +I 1, then -U n and +U n+1 for every later row.
    assert len(changes) == 10
    for key, kinds in changes.items():
        after = kinds.get("+U", [])
        assert kinds["+I"] == [1], key
        assert sorted(after) == list(range(2, len(after) + 2)), key
        assert sorted(kinds.get("-U", [])) == list(range(1, len(after) + 1)), key
