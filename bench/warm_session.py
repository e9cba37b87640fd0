"""The benches' SparkSession: a warm one, as a notebook's after its first job (the JVM and
flowmagic's workers started, Structured Streaming warmed up behind the first bounded job)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any


def spark_session(master: str, **settings: str) -> Any:
    """The benches' SparkSession on ``master`` with ``settings``: no UI, the driver on
    127.0.0.1, Spark's logging off. Imports no flowmagic (a cold start measures its import)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
    )
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    return spark


def warm_session(master: str, **settings: str) -> tuple[Any, float]:
    """A SparkSession on ``master`` with ``settings``, warmed; and how long after the first
    bounded job ended its background warm-up took."""
    import flowmagic
    from flowmagic.runtime.spark.warmup import warmed

    spark = spark_session(master, **settings)
    warm = flowmagic.StreamExecutionEnvironment(parallelism=2)
    warm.from_collection(list(range(10))).key_by(lambda i: i % 2).sum(0).add_sink(lambda record: None)
    warm.execute("warm-up")
    ended = time.time()
    warmed(spark)
    return spark, time.time() - ended
