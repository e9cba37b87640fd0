"""The continuous mode on a real local Spark: unbounded sources, state across epochs, savepoints.

Every job here runs as Structured Streaming micro-batches (epochs) on the test session
(``local[2,4]``: failed tasks are retried). Sources are real: the data generator, a TCP
server on 127.0.0.1, and Spark's own rate source through ``from_spark``.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from continuous_support import LineServer, Printed, running_counts, start, wait_for

import flowmagic
from flowmagic import errors
from flowmagic.runtime.continuous.job import JobStatus
from flowmagic.vocabulary.configuration import Configuration

pytestmark = pytest.mark.e2e


def test_a_keyed_running_count_over_a_data_generator_loses_and_repeats_nothing(spark, tmp_path) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.enable_checkpointing(500)
    env.get_checkpoint_config().set_checkpoint_storage(f"file://{tmp_path / 'checkpoints'}")
    env.from_datagen(lambda i: (f"k{i % 7}", 1), rows_per_second=400).key_by(lambda p: p[0]).sum(1).print()
    printed = Printed()
    job = start(env, printed)
    wait_for(lambda: job.epochs >= 4 and len(printed.pairs()) >= 300, job)
    assert job.get_job_status() is JobStatus.RUNNING
    savepoint = job.stop_with_savepoint(str(tmp_path / "savepoint"))
    assert job.get_job_status() is JobStatus.FINISHED
    # Every key counts 1, 2, 3, ... with no gap and no repeat, across every epoch.
    for key, values in running_counts(printed.pairs()).items():
        assert values == list(range(1, len(values) + 1)), key
    assert job.checkpoints.completed >= 1 and job.checkpoints.last_size_bytes
    assert (tmp_path / "savepoint" / "_metadata.json").exists() and savepoint == str(tmp_path / "savepoint")
    vertices = job.monitor.snapshot().vertices
    assert vertices[-1].records_in == len(printed.pairs())
    # The view shows each subtask's watermark and load (Flink's busy and back-pressured time).
    from flowmagic.widgets.job_view import JobView

    snapshot = job.snapshot()
    load = snapshot.continuous.load
    assert all(figures is not None and 0 < figures[0] <= 1000 for figures in load[vertices[-1].id])
    view = JobView(job.graph.job_graph)
    view.update(snapshot)
    assert "Busy (ms/s)" in view.to_html() and "Back-pressured (ms/s)" in view.to_html()


def _counting_program(env: flowmagic.StreamExecutionEnvironment, edited: bool) -> None:
    # The source's position is its state: its uid keeps it when the program around it changes.
    source = env.from_datagen(lambda i: (f"k{i % 5}", 1), rows_per_second=300).uid("numbers")
    if edited:
        source = source.filter(lambda pair: True).name("an added filter")
    source.key_by(lambda p: p[0]).sum(1).uid("counts").print()


def test_savepoint_edit_and_restore_at_another_parallelism_keeps_keyed_state(spark, tmp_path) -> None:
    first = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _counting_program(first, edited=False)
    printed = Printed()
    job = start(first, printed, "before")
    wait_for(lambda: job.epochs >= 3 and len(printed.pairs()) >= 50, job)
    savepoint = job.stop_with_savepoint(str(tmp_path / "sp"))
    last = {key: values[-1] for key, values in running_counts(printed.pairs()).items()}

    configuration = Configuration().set_string("execution.savepoint.path", savepoint)
    second = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    second.set_parallelism(3)
    _counting_program(second, edited=True)
    printed_after = Printed()
    restored = start(second, printed_after, "after")
    wait_for(lambda: set(running_counts(printed_after.pairs())) == set(last), restored)
    restored.cancel()
    assert restored.get_job_status() is JobStatus.CANCELED
    for key, values in running_counts(printed_after.pairs()).items():
        # Each key goes on from where the savepoint left it, on whichever new subtask owns it.
        assert values == list(range(last[key] + 1, last[key] + 1 + len(values))), key


class _Huge:
    """State whose snapshot needs more memory than there is (as a state too large would)."""

    def __reduce__(self):
        raise MemoryError


class _KeepsHugeState(flowmagic.KeyedProcessFunction):
    def open(self, runtime_context) -> None:
        self.state = runtime_context.get_state(flowmagic.ValueStateDescriptor("huge", None))

    def process_element(self, value, ctx, out):
        self.state.update(_Huge())


def test_state_that_does_not_fit_in_memory_fails_the_job_naming_its_operator(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.from_datagen(lambda i: i % 3).key_by(lambda i: i).process(_KeepsHugeState()).name("huge state").print()
    job = start(env, Printed(), "huge")
    with pytest.raises(errors.JobFailedError) as failure:
        job.wait(120)
    assert "huge state" in str(failure.value) and "does not fit in the Python worker's memory" in str(failure.value)


def test_a_new_run_restored_from_the_retained_checkpoint_of_a_cancelled_run_resumes_the_job(spark, tmp_path) -> None:
    # As a restarted notebook does, Flink's way: the same program, restored from the last
    # checkpoint the first run retained (<checkpoint dir>/<job id>/chk-<n>).
    from flowmagic.datastream import ExternalizedCheckpointRetention

    def program(restore: str | None) -> flowmagic.StreamExecutionEnvironment:
        configuration = Configuration()
        if restore is not None:
            configuration.set_string("execution.savepoint.path", restore)
        env = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
        env.set_parallelism(2)
        env.enable_checkpointing(200)
        env.get_checkpoint_config().set_checkpoint_storage(f"file://{tmp_path / 'checkpoints'}")
        env.get_checkpoint_config().set_externalized_checkpoint_retention(
            ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
        )
        _counting_program(env, edited=False)
        return env

    printed = Printed()
    job = start(program(None), printed, "first run")
    wait_for(lambda: job.checkpoints.completed >= 3 and len(printed.pairs()) >= 30, job)
    job.cancel()
    (retained,) = (tmp_path / "checkpoints" / job.get_job_id()).glob("chk-*")
    # The checkpoint is where the state was: what the first run printed after it comes again.
    checkpoint_epoch = json.loads((retained / "_metadata.json").read_text())["epoch"]
    printed_again = Printed()
    resumed = start(program(str(retained)), printed_again, "second run")
    wait_for(lambda: len(printed_again.pairs()) >= 30, resumed)
    resumed.cancel()
    restored_counts: dict[str, int] = {}
    for key, values in running_counts(printed_again.pairs()).items():
        # Nothing lost and nothing repeated since the checkpoint: each key goes on by one.
        assert values == list(range(values[0], values[0] + len(values))), key
        restored_counts[key] = values[0] - 1
    # The counts and the generator's position were restored together: records 0 to n-1 were
    # counted (k0 counted 0, 5, 10, ...), n of them at most what the first run printed.
    position = sum(restored_counts.values())
    assert restored_counts == {f"k{k}": len(range(k, position, 5)) for k in range(5)}
    assert checkpoint_epoch >= 2 and 0 < position <= len(printed.pairs())


@pytest.fixture
def s3(spark):
    """A real S3 endpoint on 127.0.0.1 (moto's server) with a bucket, set as the session's S3A
    endpoint as a Spark user sets it."""
    from moto.server import ThreadedMotoServer
    from pyarrow import fs

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    _host, port = server.get_host_and_port()
    settings = {
        "spark.hadoop.fs.s3a.endpoint": f"http://127.0.0.1:{port}",
        "spark.hadoop.fs.s3a.access.key": "flowmagic",
        "spark.hadoop.fs.s3a.secret.key": "flowmagic-secret",
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.path.style.access": "true",
    }
    bucket = fs.S3FileSystem(
        access_key="flowmagic",
        secret_key="flowmagic-secret",
        region="us-east-1",
        endpoint_override=f"127.0.0.1:{port}",
        scheme="http",
        allow_bucket_creation=True,
    )
    bucket.create_dir("savepoints")
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield bucket
    finally:
        for key in settings:
            spark.conf.unset(key)
        server.stop()


def test_a_savepoint_on_s3_restores_at_another_parallelism(spark, s3) -> None:
    first = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _counting_program(first, edited=False)
    printed = Printed()
    job = start(first, printed, "to s3")
    wait_for(lambda: job.epochs >= 3 and len(printed.pairs()) >= 50, job)
    savepoint = job.stop_with_savepoint("s3a://savepoints/counts")
    assert savepoint == "s3a://savepoints/counts"
    assert s3.get_file_info("savepoints/counts/_metadata.json").size > 0
    last = {key: values[-1] for key, values in running_counts(printed.pairs()).items()}

    configuration = Configuration().set_string("execution.savepoint.path", savepoint)
    second = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    second.set_parallelism(3)
    _counting_program(second, edited=False)
    printed_after = Printed()
    restored = start(second, printed_after, "from s3")
    wait_for(lambda: set(running_counts(printed_after.pairs())) == set(last), restored)
    restored.cancel()
    for key, values in running_counts(printed_after.pairs()).items():
        assert values == list(range(last[key] + 1, last[key] + 1 + len(values))), key


def test_checkpoints_on_s3_without_sparks_connector_fail_saying_what_is_missing(spark, s3) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.get_checkpoint_config().set_checkpoint_storage("s3a://savepoints/checkpoints")
    env.from_datagen(lambda i: i).add_sink(lambda i: None)
    # flowmagic writes its state there itself; Spark's own offsets need Spark's S3A connector,
    # which this Spark lacks.
    with pytest.raises(errors.JobError, match="hadoop-aws"):
        start(env, Printed(), "checkpoints on s3")


def test_state_of_an_operator_missing_from_the_new_program_needs_allow_non_restored_state(spark, tmp_path) -> None:
    first = flowmagic.StreamExecutionEnvironment(parallelism=1)
    _counting_program(first, edited=False)
    printed = Printed()
    job = start(first, printed, "with counts")
    wait_for(lambda: len(printed.pairs()) >= 5, job)
    savepoint = job.stop_with_savepoint(str(tmp_path / "sp"))

    def without_counts(allow: bool) -> flowmagic.StreamExecutionEnvironment:
        configuration = Configuration().set_string("execution.savepoint.path", savepoint)
        configuration.set_boolean("execution.savepoint.ignore-unclaimed-state", allow)
        env = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
        env.set_parallelism(1)
        env.from_datagen(lambda i: i, rows_per_second=10).map(lambda i: i).print()
        return env

    with pytest.raises(errors.JobError, match=r"Cannot map checkpoint/savepoint state for operator \w+ to the new"):
        start(without_counts(False), Printed())
    allowed = start(without_counts(True), Printed())
    allowed.cancel()


def test_socket_word_count_in_processing_time_windows(spark) -> None:
    server = LineServer()
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    (
        env.socket_text_stream("127.0.0.1", server.port)
        .flat_map(lambda line: [(word, 1) for word in line.split()])
        .key_by(lambda pair: pair[0])
        .window(flowmagic.TumblingProcessingTimeWindows.of(flowmagic.Time.seconds(1)))
        .sum(1)
        .print()
    )
    printed = Printed()
    job = start(env, printed, "socket wordcount")
    try:
        server.send("to be or not to be", "that is the question")
        # No more input: the windows must still fire, in wall-clock time.
        try:
            wait_for(lambda: sum(count for _word, count in printed.pairs()) >= 10, job)
        except AssertionError as error:
            raise AssertionError(f"{printed.lines} {error}") from None
    finally:
        job.cancel()
        server.close()
    totals: dict[str, int] = {}
    for word, count in printed.pairs():
        totals[word] = totals.get(word, 0) + count
    assert totals == {"to": 2, "be": 2, "or": 1, "not": 1, "that": 1, "is": 1, "the": 1, "question": 1}


class _Timeout(flowmagic.KeyedProcessFunction):
    """Emits a key's count once no element of it came for 300 ms (processing time)."""

    def open(self, runtime_context) -> None:
        self.count = runtime_context.get_state(flowmagic.ValueStateDescriptor("count", None))

    def process_element(self, value, ctx, out):
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_processing_time_timer(ctx.timer_service().current_processing_time() + 300)

    def on_timer(self, timestamp, ctx, out):
        out.collect((ctx.get_current_key(), self.count.value()))


def test_processing_time_timers_fire_without_input(spark) -> None:
    server = LineServer()
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.socket_text_stream("127.0.0.1", server.port).key_by(lambda line: line).process(_Timeout()).print()
    printed = Printed()
    job = start(env, printed, "timeouts")
    try:
        server.send("a", "b", "a")
        wait_for(lambda: ("a", 2) in printed.pairs() and ("b", 1) in printed.pairs(), job)
    finally:
        job.cancel()
        server.close()


def test_epochs_with_nothing_to_do_run_no_spark_job_and_the_job_goes_on_from_its_live_state(spark) -> None:
    server = LineServer()
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.socket_text_stream("127.0.0.1", server.port).map(lambda w: (w, 1)).key_by(lambda p: p[0]).sum(1).print()
    printed = Printed()
    job = start(env, printed, "idle")
    tracker = spark.sparkContext.statusTracker()
    try:
        server.send("a", "b", "a")
        wait_for(lambda: len(printed.pairs()) == 3, job)
        jobs_before, epochs_before = len(tracker.getJobIdsForGroup(f"flowmagic-{job.job_id}")), job.epochs
        wait_for(lambda: job.epochs >= epochs_before + 5, job)
        # No input and no timer: the epochs completed (manifests written) without a Spark job.
        assert len(tracker.getJobIdsForGroup(f"flowmagic-{job.job_id}")) == jobs_before
        server.send("a", "b")
        wait_for(lambda: len(printed.pairs()) == 5, job)
    finally:
        job.cancel()
        server.close()
    assert sorted(printed.pairs()) == [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2)]


def test_an_idle_subtask_stops_holding_back_event_time_windows(spark) -> None:
    server = LineServer()
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    strategy = (
        flowmagic.WatermarkStrategy.for_monotonous_timestamps()
        .with_timestamp_assigner(lambda event, _ts: event[1])
        .with_idleness(flowmagic.Duration.of_millis(300))
    )
    (
        env.socket_text_stream("127.0.0.1", server.port)
        .map(lambda line: (line.split(",")[0], int(line.split(",")[1]), 1))
        # Every event goes to the first subtask: the second never sees one.
        .partition_custom(lambda key, partitions: 0, lambda event: event[0])
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda event: event[0])
        .window(flowmagic.TumblingEventTimeWindows.of(flowmagic.Time.seconds(5)))
        .sum(2)
        .print()
    )
    printed = Printed()
    job = start(env, printed, "idleness")
    try:
        server.send("a,1000", "a,2000", "b,3000", "a,6000")
        wait_for(lambda: len(printed.lines) >= 2, job)
    finally:
        job.cancel()
        server.close()
    assert sorted(line.split("> ", 1)[-1] for line in printed.lines) == ["(a,1000,2)", "(b,3000,1)"]


def test_admission_keeps_the_epochs_of_a_slow_pipeline_short(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_datagen(lambda i: i).map(lambda i: time.sleep(0.002) or i).add_sink(lambda i: None)
    job = start(env, Printed(), "slow")
    wait_for(lambda: job.epochs >= 4, job)
    started = time.time()
    job.cancel()
    # A data generator as fast as admitted, at 2 ms a record: epochs stay within seconds.
    assert time.time() - started < 5
    assert job.get_job_status() is JobStatus.CANCELED


def test_watermarks_are_periodic_so_records_out_of_order_within_an_interval_are_not_late(spark) -> None:
    server = LineServer()
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    strategy = flowmagic.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event, _ts: event[1]
    )
    (
        env.socket_text_stream("127.0.0.1", server.port)
        .map(lambda line: (line.split(",")[0], int(line.split(",")[1]), 1))
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda event: event[0])
        .window(flowmagic.TumblingEventTimeWindows.of(flowmagic.Time.seconds(5)))
        .sum(2)
        .print()
    )
    printed = Printed()
    job = start(env, printed, "periodic watermarks")
    try:
        # Together, as within one watermark interval in Flink: 1000 comes after 6000 but before
        # the watermark 6000 brings, so it is not late (a watermark after every record would
        # have closed its window); that watermark then closes the window of 1000.
        server.send("a,6000", "a,1000")
        wait_for(lambda: len(printed.lines) >= 1, job)
        server.send("a,11000")
        wait_for(lambda: len(printed.lines) >= 2, job)
    finally:
        job.cancel()
        server.close()
    assert [line.split("> ", 1)[-1] for line in printed.lines] == ["(a,1000,1)", "(a,6000,1)"]


def test_a_spark_rate_source_feeds_a_keyed_count(spark) -> None:
    rate = spark.readStream.format("rate").option("rowsPerSecond", 50).load()
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    (
        env.from_spark(rate)
        .map(lambda row: ("even" if row.value % 2 == 0 else "odd", 1))
        .key_by(lambda pair: pair[0])
        .sum(1)
        .print()
    )
    printed = Printed()
    job = start(env, printed, "rate")
    wait_for(lambda: len(printed.pairs()) >= 60, job)
    job.cancel()
    counts = running_counts(printed.pairs())
    assert set(counts) == {"even", "odd"}
    for key, values in counts.items():
        assert values == list(range(1, len(values) + 1)), key


def test_execute_and_collect_yields_records_as_they_come_and_close_cancels(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    records = env.from_datagen(lambda i: i * 10, rows_per_second=100).execute_and_collect()
    first = [next(records) for _ in range(25)]
    records.close()
    assert first == [i * 10 for i in range(25)]
    assert records._job is not None and records._job.get_job_status() is JobStatus.CANCELED


def test_execute_and_collect_with_a_limit_stops_the_job(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    records = list(env.from_datagen(rows_per_second=100).execute_and_collect(limit=10))
    assert len(records) == 10


def test_a_data_generator_source_of_long_max_records_runs_unbounded(spark) -> None:
    from flowmagic.datastream.connectors.datagen import LONG_MAX, DataGeneratorSource, RateLimiterStrategy

    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    source = DataGeneratorSource(lambda i: i, LONG_MAX, RateLimiterStrategy.per_second(200), flowmagic.Types.LONG())
    numbers = env.from_source(source, flowmagic.WatermarkStrategy.no_watermarks(), "numbers")
    # Flink's "for ever": in flowmagic a continuous job, which runs until the collector has enough.
    records = sorted(numbers.execute_and_collect(limit=300))
    assert len(records) == 300 and len(set(records)) == 300


def test_a_failed_task_is_retried_and_the_job_loses_and_repeats_nothing(spark, tmp_path) -> None:
    marker = tmp_path / "failed-once"

    def fail_once(pair):
        if pair[0] == "k3" and not marker.exists():
            marker.write_text("x")
            raise RuntimeError("a worker fails once")
        return pair

    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_datagen(lambda i: (f"k{i % 4}", 1), rows_per_second=300).map(fail_once).key_by(lambda p: p[0]).sum(
        1
    ).print()
    printed = Printed()
    job = start(env, printed, "retried")
    wait_for(lambda: job.epochs >= 3 and len(printed.pairs()) >= 100, job)
    job.cancel()
    assert marker.exists()
    for key, values in running_counts(printed.pairs()).items():
        assert values == list(range(1, len(values) + 1)), key


def test_an_unbounded_source_in_batch_mode_is_flinks_error(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.set_runtime_mode("batch")
    env.from_datagen(rows_per_second=10).print()
    with pytest.raises(errors.ProgramError, match=r"Detected an UNBOUNDED source with the 'execution\.runtime-mode'"):
        env.execute_async()


def test_a_socket_source_whose_server_closes_ends_the_job_as_finished(spark) -> None:
    server = LineServer()
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    (
        env.socket_text_stream("127.0.0.1", server.port)
        .flat_map(lambda line: [(word, 1) for word in line.split()])
        .key_by(lambda pair: pair[0])
        .sum(1)
        .print()
    )
    printed = Printed()
    job = start(env, printed, "closing socket")
    server.send("a b a", "c")
    server.close()
    # As Flink's socket source with max_retry=0: the end of the connection ends the source.
    assert job.wait(120) is JobStatus.FINISHED
    assert sorted(printed.pairs()) == [("a", 1), ("a", 2), ("b", 1), ("c", 1)]


def _broadcast_and_keyed_state_program(env: flowmagic.StreamExecutionEnvironment) -> None:
    from flowmagic.vocabulary.state import AggregatingStateDescriptor, ReducingStateDescriptor

    rules = flowmagic.MapStateDescriptor("rules")

    class Count(flowmagic.AggregateFunction):
        def create_accumulator(self):
            return 0

        def add(self, value, accumulator):
            return accumulator + 1

        def get_result(self, accumulator):
            return accumulator

    class Counting(flowmagic.KeyedBroadcastProcessFunction):
        def open(self, runtime_context) -> None:
            self.index = runtime_context.get_index_of_this_subtask()
            last = flowmagic.ValueStateDescriptor("last")
            last.enable_time_to_live(flowmagic.StateTtlConfig.new_builder(flowmagic.Time.hours(1)).build())
            self.last = runtime_context.get_state(last)
            self.total = runtime_context.get_reducing_state(ReducingStateDescriptor("total", lambda a, b: a + b))
            self.count = runtime_context.get_aggregating_state(AggregatingStateDescriptor("count", Count()))

        def process_element(self, value, ctx):
            self.total.add(1)
            self.count.add(value)
            self.last.update((self.last.value() or 0) + 1)
            yield f"key {ctx.get_current_key()} {self.total.get()} {self.count.get()} {self.last.value()}"

        def process_broadcast_element(self, value, ctx):
            state = ctx.get_broadcast_state(rules)
            state.put("seen", (state.get("seen") or 0) + 1)
            yield f"rule {self.index} {state.get('seen')}"

    events = env.from_datagen(lambda i: (f"k{i % 4}", i), rows_per_second=100)
    broadcast = env.from_datagen(lambda i: i, rows_per_second=10).broadcast(rules)
    events.key_by(lambda e: e[0]).connect(broadcast).process(Counting()).uid("counting").print()


def _broadcast_and_keyed_lines(printed: Printed) -> tuple[dict[str, list[tuple[int, ...]]], dict[int, list[int]]]:
    keys: dict[str, list[tuple[int, ...]]] = {}
    rules: dict[int, list[int]] = {}
    for line in list(printed.lines):
        kind, name, *values = line.split("> ", 1)[-1].split()
        if kind == "key":
            keys.setdefault(name, []).append(tuple(map(int, values)))
        else:
            rules.setdefault(int(name), []).append(int(values[0]))
    return keys, rules


def test_broadcast_state_and_reducing_aggregating_ttl_state_survive_a_savepoint_at_another_parallelism(
    spark, tmp_path
) -> None:
    first = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _broadcast_and_keyed_state_program(first)
    printed = Printed()
    job = start(first, printed, "before")
    wait_for(lambda: job.epochs >= 3 and len(_broadcast_and_keyed_lines(printed)[1]) == 2, job)
    savepoint = job.stop_with_savepoint(str(tmp_path / "sp"))
    keys, rules = _broadcast_and_keyed_lines(printed)
    for key, values in keys.items():
        # The value (with TTL), reducing and aggregating states count each key's records alike.
        assert values == [(n, n, n) for n in range(1, len(values) + 1)], (key, [v[0] for v in values])
    # Each subtask received every broadcast record: both broadcast states saw them all.
    assert rules[0] == rules[1] == list(range(1, len(rules[0]) + 1))

    configuration = Configuration().set_string("execution.savepoint.path", savepoint)
    second = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    second.set_parallelism(3)
    _broadcast_and_keyed_state_program(second)
    printed_after = Printed()
    restored = start(second, printed_after, "after")
    wait_for(
        lambda: (
            len(_broadcast_and_keyed_lines(printed_after)[1]) == 3
            and set(_broadcast_and_keyed_lines(printed_after)[0]) == set(keys)
        ),
        restored,
    )
    restored.cancel()
    keys_after, rules_after = _broadcast_and_keyed_lines(printed_after)
    for key, values in keys_after.items():
        last = len(keys[key])
        assert values[0] == (last + 1, last + 1, last + 1), key
    # The new third subtask got a copy of the broadcast state, as the two old ones kept theirs.
    assert {index: seen[0] for index, seen in rules_after.items()} == {index: len(rules[0]) + 1 for index in range(3)}


class _WindowSumsFailingOnce(flowmagic.ProcessWindowFunction):
    """Each window's sum, as ``key:start:sum``; the first firing of the window at 3000 fails
    its task once (the retry restores the window vertex from whole and delta snapshots)."""

    def __init__(self, marker: str):
        self.marker = marker

    def process(self, key, context, elements):
        start = context.window().start
        if start == 3000 and not os.path.exists(self.marker):
            with open(self.marker, "w") as written:
                written.write("x")
            raise RuntimeError("a worker fails once")
        return [f"{key}:{start}:{sum(e[2] for e in elements)}"]


def _window_sums_program(env: flowmagic.StreamExecutionEnvironment, port: int, marker: str) -> None:
    strategy = flowmagic.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event, _ts: event[1]
    )
    (
        env.socket_text_stream("127.0.0.1", port)
        .map(lambda line: (line.split(",")[0], int(line.split(",")[1]), int(line.split(",")[2])))
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda event: event[0])
        .window(flowmagic.TumblingEventTimeWindows.of(flowmagic.Time.seconds(1)))
        .process(_WindowSumsFailingOnce(marker))
        .uid("window sums")
        .print()
    )


def _events(times: range) -> list[str]:
    return [f"{'abcde'[t // 250 % 5]},{t},{t // 250}" for t in times]


def test_event_time_windows_survive_a_failed_task_and_a_savepoint_at_another_parallelism(spark, tmp_path) -> None:
    marker = str(tmp_path / "failed-once")
    first_events, second_events = _events(range(0, 5500, 250)), _events(range(5500, 10000, 250))
    # Flink's output: every window the watermark closed, each once (the window at 5000 is
    # open when the savepoint is taken, and gets elements of both runs).
    expected: dict[tuple[str, int], int] = {}
    for line in first_events + second_events:
        key, time_, value = line.split(",")
        slot = (key, int(time_) // 1000 * 1000)
        expected[slot] = expected.get(slot, 0) + int(value)
    expected_lines = sorted(f"{key}:{start}:{total}" for (key, start), total in expected.items())

    def records(printed: Printed) -> list[str]:
        return [line.split("> ", 1)[-1] for line in printed.lines]

    server = LineServer()
    first = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _window_sums_program(first, server.port, marker)
    printed = Printed()
    job = start(first, printed, "windows before")
    try:
        for batch in range(0, len(first_events), 4):
            server.send(*first_events[batch : batch + 4])
            # One epoch per batch: the windows' state is restored from snapshots of changes.
            sent = min(batch + 4, len(first_events))
            wait_for(lambda sent=sent: job.monitor.snapshot().vertices[-1].records_in >= sent, job)
        wait_for(lambda: len(records(printed)) >= sum(start < 5000 for _key, start in expected), job)
        savepoint = job.stop_with_savepoint(str(tmp_path / "sp"))
    finally:
        server.close()
    assert os.path.exists(marker)

    server = LineServer()
    configuration = Configuration().set_string("execution.savepoint.path", savepoint)
    second = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    second.set_parallelism(3)
    _window_sums_program(second, server.port, marker)
    printed_after = Printed()
    restored = start(second, printed_after, "windows after")
    try:
        # Far ahead, to every subtask of the (rebalanced) watermark assigner: closes the rest.
        server.send(*second_events, *["a,20000,0"] * 6)
        wait_for(lambda: len(records(printed)) + len(records(printed_after)) >= len(expected_lines), restored)
        time.sleep(1)  # nothing more comes
    finally:
        restored.cancel()
        server.close()
    assert sorted(records(printed) + records(printed_after)) == expected_lines
