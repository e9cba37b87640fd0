"""Shared fixtures: one real local Spark session for the runtime tests."""

from __future__ import annotations

import os
import secrets
import sys

import pytest

collect_ignore_glob = ["notebooks_for_tests/*"]

# Functions and classes defined in test modules are pickled by reference: the Python workers
# Spark starts must be able to import the test modules too, in each layer's folder.
_TESTS = os.path.dirname(os.path.abspath(__file__))
_LAYERS = sorted(
    entry.path
    for entry in os.scandir(_TESTS)
    if entry.is_dir() and entry.name not in ("conformance", "notebooks_for_tests")
)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_TESTS, *_LAYERS, os.environ.get("PYTHONPATH")) if p)
# Checkpoints are signed with the user's state key: the tests use one of their own, so that
# running them neither creates nor reads a key file in the home directory (the tests of the
# key file set their own config directory).
os.environ.setdefault("FLOWMAGIC_STATE_KEY", secrets.token_hex(32))


@pytest.fixture(scope="session")
def spark():
    """A real ``local[2]`` SparkSession (task failures retried up to 4 times)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from flowmagic.runtime.spark import get_spark_session

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    session = (
        SparkSession.builder.master("local[2,4]")
        .appName("flowmagic-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.default.parallelism", "2")
        # A busy machine (CI runners are shared): the Python processes' socket handshakes
        # with the JVM (15 s by default), and the JVM's RPCs and heartbeats, given time.
        .config("spark.python.authenticate.socketTimeout", "120s")
        .config("spark.network.timeout", "600s")
        .config("spark.executor.heartbeatInterval", "60s")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    assert get_spark_session() is session
    yield session
    session.stop()


@pytest.fixture(scope="session")
def pyspark_only_python() -> str:
    """A Python with nothing but ``pyspark`` (this one's version) installed, as a cluster's
    workers or a user's ``python3`` have it; built once and kept in the temp directory."""
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    import pyspark

    name = f"flowmagic-pyspark-only-{pyspark.__version__}-py{sys.version_info.major}{sys.version_info.minor}"
    venv = Path(tempfile.gettempdir()) / name
    if not (venv / "bin" / "python").exists():
        # Built beside its place and renamed into it, so that a half-built venv is never used
        # (only `bin/python` is run, which works from wherever the venv is).
        building = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=venv.parent))
        subprocess.run([sys.executable, "-m", "venv", str(building)], check=True)
        install = subprocess.run(
            [str(building / "bin" / "python"), "-m", "pip", "install", "-q", f"pyspark=={pyspark.__version__}"],
            capture_output=True,
            text=True,
        )
        if install.returncode != 0:
            shutil.rmtree(building)
            pytest.skip(f"cannot install pyspark into a fresh venv: {install.stderr[-2000:]}")
        try:
            building.rename(venv)
        except OSError:  # another test run built it meanwhile
            shutil.rmtree(building)
    return str(venv / "bin" / "python")
