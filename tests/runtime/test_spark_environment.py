"""Spark as users have it: their own local session (no PYSPARK_PYTHON, workers on whatever
``python3`` is first on PATH), workers of another Python version, Spark Connect sessions, and
the embedded session started from a path with spaces. Each starts Spark in a fresh process (the
slow part): a test that can share one start shares it."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
e2e = pytest.mark.e2e

_WORDCOUNT = """
env = flowmagic.StreamExecutionEnvironment(parallelism=2)
(env.from_collection(["to be or not to be"]).flat_map(str.split).map(lambda w: (w, 1))
    .key_by(lambda t: t[0]).sum(1).print())
result = execute(env.get_execution_graph(), echo=False)
"""

_USER_SESSION = (
    """
import glob, importlib.util, json, os, sys, tempfile
from pyspark import SparkFiles
from pyspark.sql import SparkSession
import flowmagic
from flowmagic.runtime import execute

spark = SparkSession.builder.master("local[2]").getOrCreate()
spark.sparkContext.setLogLevel("OFF")
"""
    + _WORDCOUNT
    + """
workers = spark.sparkContext.parallelize(range(1), 1).map(
    lambda _: (sys.prefix, importlib.util.find_spec("mmh3") is not None)).collect()
files = SparkFiles.getRootDirectory()
outcome = {"printed": sorted(line for _e, line in result.printed), "workers": workers,
           "driver_host": spark.conf.get("spark.driver.host"), "metrics": result.metrics.metrics_address,
           "shipped": sorted(glob.glob(os.path.join(files, "**", "flowmagic.zip"), recursive=True))}
spark.stop()
outcome["files_left"] = os.path.exists(files)
outcome["temp_left"] = glob.glob(os.path.join(tempfile.gettempdir(), "flowmagic-*"))
print(json.dumps(outcome))
"""
)


def _env_without(*names: str, **extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in names}
    env.update(extra)
    return env


def _last_json(run: subprocess.CompletedProcess) -> dict:
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@e2e
def test_a_users_local_session_whose_workers_have_only_pyspark(pyspark_only_python, tmp_path) -> None:
    # No PYSPARK_PYTHON: Spark's workers run `python3` from PATH, here a venv with only pyspark.
    path = f"{Path(pyspark_only_python).parent}{os.pathsep}{os.environ['PATH']}"
    env = _env_without("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", PATH=path, TMPDIR=str(tmp_path))
    run = subprocess.run(
        [sys.executable, "-c", _USER_SESSION], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )
    outcome = _last_json(run)
    assert outcome["printed"] == ["1> (not,1)", "2> (be,1)", "2> (be,2)", "2> (or,1)", "2> (to,1)", "2> (to,2)"]
    assert outcome["workers"] == [[str(Path(pyspark_only_python).parent.parent), False]]
    # Spark filled spark.driver.host with the machine's address; the channel stays on loopback.
    assert outcome["metrics"].startswith("127.0.0.1:"), outcome
    # The shipped zip lived in the SparkContext's files directory, gone with it; nothing in the temp dir.
    assert outcome["shipped"]
    assert outcome["files_left"] is False
    assert outcome["temp_left"] == []


def _another_python() -> str | None:
    mine = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [shutil.which(f"python3.{minor}") for minor in range(10, 15)]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")))
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
        )
        version = probe.stdout.strip()
        if probe.returncode == 0 and version != mine and tuple(map(int, version.split("."))) >= (3, 9):
            return candidate
    return None


_WRONG_PYTHON = (
    """
import json
from pyspark.sql import SparkSession
import flowmagic
from flowmagic.runtime import execute

spark = SparkSession.builder.master("local[1]").getOrCreate()
spark.sparkContext.setLogLevel("OFF")
try:
"""
    + textwrap.indent(_WORDCOUNT, "    ")
    + """
except flowmagic.FlowError as error:
    print(json.dumps({"type": type(error).__name__, "message": str(error)}))
spark.stop()
"""
)


@e2e
def test_workers_of_another_python_version_fail_with_the_fix(tmp_path) -> None:
    other = _another_python()
    if other is None:
        pytest.skip("no Python of another minor version on this machine")
    env = _env_without("PYSPARK_DRIVER_PYTHON", PYSPARK_PYTHON=other)
    run = subprocess.run(
        [sys.executable, "-c", _WRONG_PYTHON], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )
    outcome = _last_json(run)
    assert outcome["type"] == "SparkEnvironmentError", outcome
    mine = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert f"this driver runs Python {mine}" in outcome["message"]
    assert f"PYSPARK_PYTHON={sys.executable}" in outcome["message"]


_CONNECT = """
import json
import flowmagic
from pyspark.sql import SparkSession

session = SparkSession.builder.remote("local[1]").getOrCreate()
assert type(session).__module__ == "pyspark.sql.connect.session", type(session)
env = flowmagic.StreamExecutionEnvironment(parallelism=1)
env.from_collection([1, 2]).print()
try:
    env.execute(spark=session)
    print(json.dumps({"type": None}))
except flowmagic.FlowError as error:
    print(json.dumps({"type": type(error).__name__, "message": str(error)}))
finally:
    session.stop()
"""


@e2e
def test_a_spark_connect_session_is_refused_with_what_is_needed() -> None:
    # A real Spark Connect session: a local Connect server and its gRPC client.
    run = subprocess.run([sys.executable, "-c", _CONNECT], capture_output=True, text=True, timeout=300)
    outcome = _last_json(run)
    assert outcome["type"] == "SparkEnvironmentError", outcome
    assert "Spark Connect" in outcome["message"] and "RDD API" in outcome["message"]
    assert "classic SparkSession" in outcome["message"]


_EMBEDDED = """
import json
import flowmagic
from flowmagic.runtime import execute

class FailOnce(flowmagic.MapFunction):
    def open(self, ctx):
        self.doomed = ctx.get_index_of_this_subtask() == 0 and ctx.get_attempt_number() == 0
    def map(self, value):
        if self.doomed:
            raise RuntimeError("injected")
        return value

env = flowmagic.StreamExecutionEnvironment(parallelism=2)
(env.from_collection(list(range(60))).rebalance().map(FailOnce()).map(lambda v: (v % 3, 1))
    .key_by(lambda t: t[0]).sum(1).print())
result = execute(env.get_execution_graph(), echo=False)
from pyspark.sql import SparkSession
spark = SparkSession.getActiveSession()
print(json.dumps({"printed": [line for _e, line in result.printed], "file": flowmagic.__file__,
                  "master": spark.sparkContext.master,
                  "attempts": [s.attempt for v in result.metrics.vertices for s in v.subtasks]}))
spark.stop()
"""


@e2e
def test_the_embedded_session_from_a_path_with_spaces_retries_tasks_quietly(tmp_path) -> None:
    installed = tmp_path / "my projects" / "site packages"
    shutil.copytree(ROOT / "flowmagic", installed / "flowmagic", ignore=shutil.ignore_patterns("__pycache__"))
    env = _env_without("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", PYTHONPATH=str(installed))
    run = subprocess.run(
        [sys.executable, "-c", _EMBEDDED], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )
    outcome = _last_json(run)
    assert outcome["file"].startswith(str(installed))
    assert outcome["master"] == "local[*,4]"
    assert 1 in outcome["attempts"]  # subtask 0 failed its first attempt and was retried
    finals: dict[str, int] = {}
    for line in outcome["printed"]:
        key, count = line.split("> ", 1)[1].strip("()").split(",")
        finals[key] = max(finals.get(key, 0), int(count))
    assert finals == {"0": 20, "1": 20, "2": 20}
    assert len(outcome["printed"]) == 60  # none lost or repeated by the retry
    assert "incubator" not in run.stderr, run.stderr


_EMBEDDED_SESSION = """
import fcntl, json, os, re, socket, struct, tempfile, threading, time, urllib.error, urllib.parse, urllib.request
from flowmagic.runtime.spark.session import get_spark_session

# Three threads start the embedded session at once, as two `%flow run --background` cells
# started before any Spark session exists.
barrier, sessions, errors = threading.Barrier(3), [], []

def start():
    barrier.wait()
    try:
        sessions.append(get_spark_session())
    except BaseException as error:
        errors.append(repr(error))

threads = [threading.Thread(target=start) for _ in range(3)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
outcome = {"errors": errors, "contexts": len({id(s.sparkContext) for s in sessions})}
if not sessions:
    print(json.dumps(outcome))
    raise SystemExit(0)

def addresses():
    # This machine's IPv4 addresses, from its interfaces (SIOCGIFADDR).
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _index, name in socket.if_nameindex():
            try:
                answer = fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue
            found.append(socket.inet_ntoa(answer[20:24]))
    return found

def listening(port):
    # The local addresses of the sockets listening on the port, as the kernel lists them.
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as file:
            for row in file.readlines()[1:]:
                local, state = row.split()[1], row.split()[3]
                address, hex_port = local.rsplit(":", 1)
                if state == "0A" and int(hex_port, 16) == port:
                    found.append(address)
    return found

def reachable(address, port):
    try:
        socket.create_connection((address, port), timeout=10).close()
        return True
    except OSError:
        return False

spark = sessions[0]
sc = spark.sparkContext
port = int(sc.uiWebUrl.rsplit(":", 1)[1])
release = os.path.join(tempfile.mkdtemp(), "release")

def hold(_):
    deadline = time.time() + 120
    while not os.path.exists(release) and time.time() < deadline:
        time.sleep(0.05)
    return 1

def run():
    sc.setJobGroup("held", "held")
    try:
        outcome["job"] = sum(sc.parallelize(range(2), 2).map(hold).collect())
    except Exception as error:
        outcome["job"] = type(error).__name__

thread = threading.Thread(target=run)
thread.start()
while not sc.statusTracker().getJobIdsForGroup("held"):
    time.sleep(0.05)
job = sc.statusTracker().getJobIdsForGroup("held")[0]
page = urllib.request.urlopen(f"http://127.0.0.1:{port}/jobs/", timeout=60).read().decode()
token = re.search(r'name="csrfToken" value="([^"]*)"', page)
form = urllib.parse.urlencode({"id": job, "csrfToken": token.group(1) if token else ""}).encode()
try:
    urllib.request.urlopen(f"http://127.0.0.1:{port}/jobs/job/kill/", data=form, timeout=60).read()
    outcome["kill"] = "accepted"
except urllib.error.HTTPError as error:
    outcome["kill"] = error.code
outcome["kill_form"] = "/jobs/job/kill/" in page
open(release, "w").close()
thread.join()
outcome["listening"] = listening(port)
outcome["reachable"] = {address: reachable(address, port) for address in addresses()}
outcome["environment"] = os.environ.get("SPARK_LOCAL_IP")
print(json.dumps(outcome))
spark.stop()
"""


@pytest.fixture(scope="module")
def embedded_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str]:
    """One embedded session, started at once by three threads, its UI then probed: what it
    printed, and its stderr (one Spark start serves both tests below)."""
    env = _env_without("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_LOCAL_IP", PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [sys.executable, "-c", _EMBEDDED_SESSION],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path_factory.mktemp("embedded"),
    )
    return _last_json(run), run.stderr


@e2e
def test_background_runs_starting_the_embedded_session_at_once_share_it(embedded_session) -> None:
    outcome, stderr = embedded_session
    assert {"errors": outcome["errors"], "contexts": outcome["contexts"]} == {"errors": [], "contexts": 1}
    assert "incubator" not in stderr, stderr


@e2e
def test_the_embedded_sessions_ui_listens_on_loopback_only_without_kill_links(embedded_session) -> None:
    outcome, _stderr = embedded_session
    assert "listening" in outcome, outcome  # no session started, see the test above
    # 127.0.0.1, or its IPv4-mapped IPv6 form, as the kernel writes them.
    assert outcome["listening"] and set(outcome["listening"]) <= {"0100007F", "0000000000000000FFFF00000100007F"}
    others = {address: ok for address, ok in outcome["reachable"].items() if not address.startswith("127.")}
    assert not any(others.values()), others
    assert outcome["reachable"]["127.0.0.1"]
    # No kill link on the jobs page, and a kill request leaves the job running to its end.
    assert not outcome["kill_form"] and outcome["kill"] != "accepted" and outcome["job"] == 2
    # Only Spark's JVM was given the variable, not the kernel's other processes.
    assert outcome["environment"] is None


_REUSED_JVM = """
import json
from pyspark.sql import SparkSession
from flowmagic.runtime.spark.session import get_spark_session

# A session of the user's, stopped: its JVM stays, started without SPARK_LOCAL_IP.
SparkSession.builder.master("local[1]").getOrCreate().stop()
spark = get_spark_session()
print(json.dumps({"ui": spark.sparkContext.uiWebUrl, "master": spark.sparkContext.master}))
spark.stop()
"""


@e2e
def test_an_embedded_session_in_a_jvm_started_without_loopback_has_no_ui(tmp_path) -> None:
    env = _env_without("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_LOCAL_IP", PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [sys.executable, "-c", _REUSED_JVM], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )
    # Its UI would listen on every interface: there is none.
    assert _last_json(run) == {"ui": None, "master": "local[*,4]"}
