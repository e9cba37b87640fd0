"""The continuous mode: unbounded jobs as epochs driven by Spark Structured Streaming.

Each epoch is one Spark job of the bounded runtime over the input that arrived since the
previous epoch; Spark's micro-batch loop (``foreachBatch`` with a checkpoint location)
decides the epochs: their offsets, batch ids, triggers, retries and stop. flowmagic keeps
every operator's state itself, keyed by operator ID and key group, and snapshots it at the
end of every epoch in the checkpoint directory.

* ``sources``: flowmagic's own sources as Spark Python streaming data sources;
* ``feeds``: each unbounded source's driver side (offsets, a replayable line log, a Spark stream);
* ``state_store``: snapshots by operator ID and key group; manifests; savepoints;
* ``epoch``: what an executor does for one subtask in one epoch;
* ``coordinator``: the driver's side of a running job: its query, epochs, admission, restarts;
* ``checkpoints``: what a job restores from, retains and forgets;
* ``output``: what its sinks made, handed on once each epoch completed;
* ``job``: its client (Flink's ``JobClient``), which holds its coordinator, with ``status`` its ``JobStatus``.
"""
