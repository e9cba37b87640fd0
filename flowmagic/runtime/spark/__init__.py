"""The Spark executor: every ExecutionJobVertex becomes Spark tasks, one per subtask.

A vertex is one ``mapPartitionsWithIndex`` over either ``parallelism`` empty partitions
(sources read their own share) or the shuffle of its inputs, partitioned by consumer
subtask (partition ``i`` is subtask ``i``) and sorted by channel in the JVM. The whole job
is one Spark action run under a job group, so it can be cancelled. This package is the only
place that imports pyspark:

* ``session``: the embedded or the user's SparkSession;
* ``shipping``: flowmagic itself, zipped for executors that do not have it;
* ``subtask``: the function Spark runs for each partition (= subtask);
* ``shuffle``: an exchange as a JVM-side partition-and-sort of pickled frames;
* ``rdd_graph``: the ExecutionGraph as a graph of RDDs;
* ``executor``: one job's run, from plans to the sinks' results.
"""

from flowmagic.runtime.spark.executor import run_on_spark
from flowmagic.runtime.spark.session import get_spark_session

__all__ = ["get_spark_session", "run_on_spark"]
