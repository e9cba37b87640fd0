"""Shared fixtures: one real local Spark session for the runtime tests."""

from __future__ import annotations

import os
import sys

import pytest

collect_ignore_glob = ["notebooks_for_tests/*"]

# Functions and classes defined in test modules are pickled by reference: the Python workers
# Spark starts must be able to import the test modules too.
_TESTS = os.path.dirname(os.path.abspath(__file__))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_TESTS, os.environ.get("PYTHONPATH")) if p)


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
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    assert get_spark_session() is session
    yield session
    session.stop()
