"""The SparkSession a job runs on: the caller's, the active one, or an embedded local one."""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["get_spark_session"]

_QUIET_LOG4J = os.path.join(os.path.dirname(os.path.dirname(__file__)), "log4j2-quiet.properties")


def get_spark_session(spark: Any = None) -> Any:
    """``spark``, else the active SparkSession, else a new embedded ``local[*]`` one."""
    if spark is not None:
        return spark
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # Workers must run the notebook's own Python, where flowmagic and its dependencies are.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[*]")
        .appName("flowmagic")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.python.worker.reuse", "true")
        # flowmagic reports task failures itself; Spark's JVM stack traces are noise in a cell.
        .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile={_QUIET_LOG4J}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    return session
