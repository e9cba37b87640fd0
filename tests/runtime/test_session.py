"""Which SparkSession a job runs on when the caller names none."""

from __future__ import annotations

import threading

from flowmagic.runtime.spark.session import get_spark_session


def _root_level(spark) -> str:
    return str(spark.sparkContext._jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel().toString())


def test_a_job_thread_runs_on_the_callers_session_as_it_is(spark) -> None:
    # A bounded job's driver thread has no active session of its own: it takes the caller's
    # default one, and neither rebuilds it nor silences the caller's logging.
    spark.sparkContext.setLogLevel("ERROR")
    try:
        found = []
        thread = threading.Thread(target=lambda: found.append(get_spark_session()))
        thread.start()
        thread.join(120)
        assert found == [spark]
        assert _root_level(spark) == "ERROR"
    finally:
        spark.sparkContext.setLogLevel("OFF")
