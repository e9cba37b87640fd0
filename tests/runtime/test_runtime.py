"""The runtime on a real local Spark session: routing, operators, failures, cancellation."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest
from conformance_support import CONFORMANCE

import flowmagic
from flowmagic import errors
from flowmagic.runtime import execute

TABLES = json.loads((CONFORMANCE / "pointwise_connections.json").read_text())


class TagSubtask(flowmagic.MapFunction):
    """Appends the index of the subtask that saw the record."""

    def open(self, runtime_context):
        self.index = runtime_context.get_index_of_this_subtask()

    def map(self, value):
        return (*value, self.index) if isinstance(value, tuple) else (value, self.index)


def _routing(up: int, down: int, exchange: str) -> dict[int, set[int]]:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    stream = env.from_sequence(1, 200).rebalance().map(TagSubtask()).set_parallelism(up)
    tagged = getattr(stream, exchange)().map(TagSubtask()).set_parallelism(down)
    seen: dict[int, set[int]] = defaultdict(set)
    for _value, upstream, downstream in tagged.execute_and_collect():
        seen[downstream].add(upstream)
    return seen


@pytest.mark.parametrize("row", TABLES["pointwise"][:6], ids=lambda r: f"rescale{r['up']}to{r['down']}")
def test_rescale_reaches_the_subtasks_flink_reaches(row, spark) -> None:
    seen = _routing(row["up"], row["down"], "rescale")
    assert [sorted(seen[d]) for d in range(row["down"])] == row["upstream_of_downstream"]


@pytest.mark.parametrize(
    "row", TABLES["global"][:2] + TABLES["broadcast"][:2], ids=lambda r: f"{r['ship_strategy']}{r['up']}to{r['down']}"
)
def test_global_and_broadcast_routing(row, spark) -> None:
    exchange = "global_" if row["ship_strategy"] == "GLOBAL" else "broadcast"
    seen = _routing(row["up"], row["down"], exchange)
    assert [sorted(seen[d]) for d in range(row["down"])] == row["upstream_of_downstream"]


def test_hash_routing_uses_flinks_key_groups(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=3)
    words = ["a", "b", "hello", "flink", "spark", "z"]
    tagged = env.from_collection(words).key_by(lambda w: w).map(TagSubtask())
    for word, subtask in tagged.execute_and_collect():
        assert subtask == flowmagic.assign_key_to_parallel_operator(word, 128, 3)


def test_side_outputs_union_and_connect(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    odd = flowmagic.OutputTag("odd")

    def route(value, ctx, out):
        if value % 2:
            ctx.output(odd, value)
        else:
            out.collect(value)

    main = env.from_sequence(1, 10).process(route)
    both = main.map(lambda x: ("even", x)).union(main.get_side_output(odd).map(lambda x: ("odd", x)))
    letters = env.from_collection(["a", "b"])
    connected = both.connect(letters).map(lambda t: t, lambda s: ("letter", s))
    result = sorted(connected.execute_and_collect())
    assert result == sorted(
        [("even", x) for x in range(2, 11, 2)]
        + [("odd", x) for x in range(1, 10, 2)]
        + [("letter", "a"), ("letter", "b")]
    )


def test_keyed_state_and_event_time_timers(spark) -> None:
    class CountThenReport(flowmagic.KeyedProcessFunction):
        def open(self, runtime_context):
            self.count = runtime_context.get_state(flowmagic.ValueStateDescriptor("count"))

        def process_element(self, value, ctx, out):
            self.count.update((self.count.value() or 0) + 1)
            ctx.timer_service().register_event_time_timer(10_000)

        def on_timer(self, timestamp, ctx, out):
            out.collect((ctx.get_current_key(), self.count.value(), timestamp))

    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    strategy = flowmagic.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])
    events = [("a", 1000), ("b", 2000), ("a", 3000), ("a", 12000)]
    result = env.from_collection(events).assign_timestamps_and_watermarks(strategy).key_by(lambda e: e[0])
    assert sorted(result.process(CountThenReport()).execute_and_collect()) == [("a", 3, 10000), ("b", 1, 10000)]


def test_batch_mode_emits_final_results_only(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.set_runtime_mode(flowmagic.RuntimeExecutionMode.BATCH)
    counts = env.from_sequence(1, 100).map(lambda x: (x % 3, 1)).key_by(lambda t: t[0]).sum(1)
    assert sorted(counts.execute_and_collect()) == [(0, 33), (1, 34), (2, 33)]


def test_text_file_source_and_exactly_once_file_sink(tmp_path, spark) -> None:
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(1000)))
    out = tmp_path / "out"
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    sink = flowmagic.FileSink.for_row_format(str(out), flowmagic.Encoder.simple_string_encoder()).build()
    env.read_text_file(f"file://{source}").map(str.upper).sink_to(sink)
    result = env.execute()
    lines = sorted(line for path in result.committed for line in Path(path).read_text().splitlines())
    assert lines == sorted(f"LINE {i}" for i in range(1000))
    assert not (out / ".in-progress").exists()


def test_text_file_splits_keep_every_line_once(tmp_path, monkeypatch, spark) -> None:
    from flowmagic.runtime.connectors import sources

    monkeypatch.setattr(sources, "SPLIT_SIZE", 7)
    path = tmp_path / "lines.txt"
    text = "alpha\nb\n\nlonger line here\nx\r\nlast-without-newline"
    path.write_text(text)
    env = flowmagic.StreamExecutionEnvironment(parallelism=3)
    lines = list(env.read_text_file(str(path)).execute_and_collect())
    assert sorted(lines) == sorted(["alpha", "b", "", "longer line here", "x", "last-without-newline"])


def test_datagen_is_seeded_and_bounded(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    stream = env.from_datagen(lambda i, rng: (i, rng.randint(0, 1000)), count=50, seed=7)
    first, second = list(stream.execute_and_collect()), list(stream.execute_and_collect())
    assert sorted(first) == sorted(second) and len(first) == 50
    assert sorted(i for i, _ in first) == list(range(50))


def test_an_unreachable_socket_fails_the_job_without_hanging(spark) -> None:
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.socket_text_stream("127.0.0.1", port).print()
    with pytest.raises(errors.JobFailedError, match=f"Socket source 127.0.0.1:{port}: ConnectionRefusedError"):
        env.execute()


def test_unbounded_sources_run_on_spark_only() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.socket_text_stream("127.0.0.1", 9).print()
    with pytest.raises(errors.UnsupportedSourceError, match="continuous mode, on Spark only"):
        env.execute(executor="local")


def test_user_function_failure_names_operator_subtask_record_and_user_line(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)

    def explode(x):
        return 10 // (x - 7)

    env.from_sequence(1, 10).map(explode).name("divide").print()
    with pytest.raises(errors.JobFailedError) as raised:
        env.execute()
    message = str(raised.value)
    assert "ZeroDivisionError" in message
    assert "operator: divide" in message
    assert "(2/2)" in message and "record:   7" in message
    assert "in explode" in message and "return 10 // (x - 7)" in message
    assert "org.apache.spark" not in message
    assert raised.value.failure["operator"] == "divide"
    env2 = flowmagic.StreamExecutionEnvironment(parallelism=1)
    assert list(env2.from_collection([1]).execute_and_collect()) == [1]


class FailFirstAttempt(flowmagic.MapFunction):
    """Fails the first attempt of subtask 1 half way through."""

    def open(self, runtime_context):
        self.doomed = runtime_context.get_index_of_this_subtask() == 1 and runtime_context.get_attempt_number() == 0
        self.seen = 0

    def map(self, value):
        self.seen += 1
        if self.doomed and self.seen == 20:
            raise RuntimeError("injected failure")
        return value


def test_a_retried_subtask_loses_and_duplicates_nothing(spark) -> None:
    def run(mapper):
        env = flowmagic.StreamExecutionEnvironment(parallelism=2)
        counts = env.from_sequence(1, 200).map(mapper).map(lambda x: (x % 5, 1)).key_by(lambda t: t[0]).sum(1)
        counts.print()
        return execute(env.get_execution_graph(), echo=False)

    clean, retried = run(lambda x: x), run(FailFirstAttempt())
    assert sorted(retried.printed) == sorted(clean.printed)
    subtask = retried.metrics.vertices[0].subtasks[1]
    assert subtask.attempt == 1 and subtask.state == "FINISHED"


def test_cancel_stops_the_job_within_a_second_and_a_new_run_works(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_sequence(1, 10_000).map(lambda x: time.sleep(0.01) or x).print()
    cancel = threading.Event()
    cancelled_at = []
    snapshots = []

    def watch(monitor) -> None:
        snapshot = monitor.snapshot()
        snapshots.append(snapshot)
        running = any(s.state == "RUNNING" for v in snapshot.vertices for s in v.subtasks)
        if running and not cancel.is_set():
            cancel.set()
            cancelled_at.append(time.time())

    with pytest.raises(errors.JobCancelledError):
        execute(env.get_execution_graph(), cancel_event=cancel, on_progress=watch)
    assert time.time() - cancelled_at[0] < 1.5
    assert {s.state for v in snapshots[-1].vertices for s in v.subtasks} == {"CANCELED"}
    env2 = flowmagic.StreamExecutionEnvironment(parallelism=2)
    assert sorted(env2.from_sequence(1, 4).execute_and_collect()) == [1, 2, 3, 4]


@pytest.mark.parametrize("executor", ["spark", "local"])
def test_an_error_while_showing_progress_cancels_the_job(spark, executor) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_sequence(1, 10_000).map(lambda x: time.sleep(0.01) or x).print()
    monitors = []

    def broken_view(monitor) -> None:
        monitors.append(monitor)
        raise ValueError("the view broke")

    started = time.time()
    with pytest.raises(ValueError, match="the view broke"):
        execute(env.get_execution_graph(), executor=executor, on_progress=broken_view, echo=False)
    # 10,000 records of 10 ms on 2 cores take 50 s: the job was cancelled, not left running.
    assert time.time() - started < 20
    assert monitors[-1].state == "CANCELED"
    # The executor runs the next job at once (a new environment: collecting from ``env``
    # would run its slow pipeline again, as Flink's executeAndCollect runs every sink).
    started = time.time()
    fresh = flowmagic.StreamExecutionEnvironment(parallelism=2)
    assert sorted(fresh.from_sequence(1, 3).execute_and_collect(executor=executor)) == [1, 2, 3]
    assert time.time() - started < 20


def test_live_metrics_count_records_before_subtasks_finish(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_sequence(1, 400).map(lambda x: time.sleep(0.005) or x).print()
    snapshots = []
    result = execute(env.get_execution_graph(), echo=False, on_progress=lambda m: snapshots.append(m.snapshot()))
    running_counts = [
        s.records_out for snap in snapshots for v in snap.vertices for s in v.subtasks if s.state == "RUNNING"
    ]
    assert any(0 < count < 200 for count in running_counts)
    final = result.metrics.vertices[0]
    assert final.state == "FINISHED" and final.records_out == 400
    assert {s.watermark for s in final.subtasks} == {-(2**63)}  # a source has no input watermark
    assert all(s.host for s in final.subtasks)


def test_text_files_on_other_file_systems_are_read_by_sparks_hadoop_reader(tmp_path, monkeypatch, spark) -> None:
    from flowmagic.runtime import plan

    path = tmp_path / "remote.txt"
    path.write_text("".join(f"row {i}\n" for i in range(500)))
    # Treat file:// as a remote file system: the split readers then get Hadoop's lines.
    monkeypatch.setattr(plan, "local_path", lambda uri: None)
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    lines = env.read_text_file(f"file://{path}").map(str.upper)
    result = sorted(lines.execute_and_collect())
    assert result == sorted(f"ROW {i}" for i in range(500))


class _EveryRecord(flowmagic.WatermarkGenerator):
    def on_event(self, event, event_timestamp, output):
        output.emit_watermark(flowmagic.Watermark(event_timestamp - 1))


def test_window_functions_and_the_time_of_non_keyed_process_functions(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    strategy = flowmagic.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])
    events = env.from_collection([("a", 1000), ("a", 4000), ("b", 12000)]).assign_timestamps_and_watermarks(strategy)
    windows = events.key_by(lambda e: e[0]).window(flowmagic.TumblingEventTimeWindows.of(flowmagic.Time.seconds(10)))
    applied = windows.apply(lambda key, window, elements: [(key, window.start, len(elements))])
    processed = windows.process(lambda key, context, elements: [(key, context.window().end, len(elements))])
    assert sorted(applied.execute_and_collect()) == [("a", 0, 2), ("b", 10000, 1)]
    assert sorted(processed.execute_and_collect()) == [("a", 10000, 2), ("b", 20000, 1)]

    def watermark_seen(value, ctx, out):
        out.collect((value[0], ctx.timer_service().current_watermark()))

    # A watermark after every record (punctuated), so that each record sees its predecessor's.
    punctuated = flowmagic.WatermarkStrategy.for_generator(lambda context: _EveryRecord()).with_timestamp_assigner(
        lambda e, ts: e[1]
    )
    events = env.from_collection([("a", 1000), ("a", 4000), ("b", 12000)]).assign_timestamps_and_watermarks(punctuated)
    assert list(events.process(watermark_seen).execute_and_collect()) == [
        ("a", -(2**63)),
        ("a", 999),
        ("b", 3999),
    ]

    def register(value, ctx, out):
        ctx.timer_service().register_event_time_timer(5)

    env.from_collection([1]).process(register).print()
    with pytest.raises(errors.JobFailedError, match="only supported on a keyed streams"):
        env.execute()


def test_functions_see_the_task_name_of_their_chain(spark) -> None:
    class Named(flowmagic.MapFunction):
        def open(self, runtime_context):
            self.task = runtime_context.get_task_name_with_subtasks()

        def map(self, value):
            return self.task

    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    (task,) = env.from_sequence(1, 1).map(Named()).execute_and_collect()
    assert task == "Source: Sequence Source -> Map -> Sink: Data stream collect sink (1/1)#0"
