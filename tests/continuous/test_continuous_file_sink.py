"""FileSink in continuous jobs: part files roll by Flink's rolling policies and are committed
by checkpoints, exactly once across failed tasks, savepoints and restores at another
parallelism. The writer itself runs here as in a subtask; the jobs run on the test session's
real Spark (``local[2,4]``: failed tasks are retried) over a real socket."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from continuous_support import LineServer, wait_for

import flowmagic
from flowmagic import errors
from flowmagic.graph.operator_params import SinkParams
from flowmagic.runtime.clock import EpochClock
from flowmagic.runtime.connectors.file_sink import FileSinkWriter, commit_part
from flowmagic.runtime.continuous.job import JobStatus
from flowmagic.runtime.operators.operator import TaskInfo
from flowmagic.vocabulary.bucket_assigner import BucketAssigner
from flowmagic.vocabulary.rolling_policy import RollingPolicy
from flowmagic.vocabulary.sinks import Encoder, FileSink


def _writer(base: Path, policy: RollingPolicy, clock: EpochClock, check_interval: int = 60_000, index: int = 0):
    sink = (
        FileSink.for_row_format(str(base), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(policy)
        .with_bucket_check_interval(check_interval)
        .build()
    )
    task = TaskInfo("Sink: Writer", index, 2, 128, 0, False, clock, run_id="run")
    writer = FileSinkWriter("Sink: Writer", SinkParams(sink=sink), task)
    handed: list[tuple[str, str | None]] = []
    writer.output.targets.append(lambda committable, _timestamp: handed.append(committable))
    writer.output.seal()
    writer.open()
    return writer, handed


def _published(handed: list[tuple[str, str | None]], base: Path) -> list[str]:
    for in_progress, name in handed:
        if name is not None:
            commit_part(in_progress, str(base / name))
    return sorted(path.name for path in base.iterdir() if not path.name.startswith("."))


def test_a_restored_writer_truncates_its_open_file_to_the_checkpoint_and_goes_on(tmp_path) -> None:
    clock = EpochClock(1_000)
    writer, handed = _writer(tmp_path, RollingPolicy.default_rolling_policy(), clock)
    writer.process_batch(["a", "b"])
    writer.prepare_snapshot(True)
    snapshot = writer.snapshot_operator_state()
    ((open_file, none),) = handed
    assert none is None and Path(open_file).read_text() == "a\nb\n"
    # The attempt goes on writing, then fails before its epoch completes: its retry restores.
    writer.process_batch(["lost", "lost"])
    writer.buckets[""].file.flush()
    retry, retry_handed = _writer(tmp_path, RollingPolicy.default_rolling_policy(), clock)
    retry.restore_operator_state(snapshot)
    assert Path(open_file).read_text() == "a\nb\n"
    retry.process_batch(["c"])
    retry.end_input()
    published = _published(retry_handed, tmp_path)
    assert published == [snapshot["buckets"][""]["part"][1]]
    assert (tmp_path / published[0]).read_text() == "a\nb\nc\n"


def test_rolling_policies_roll_as_flinks(tmp_path) -> None:
    clock = EpochClock(0)
    by_size, handed = _writer(tmp_path / "size", RollingPolicy.default_rolling_policy(part_size=4), clock)
    # Flink rolls before writing once the file is *larger* than the part size.
    by_size.process_batch(["ab", "cd", "ef", "g"])
    by_size.end_input()
    files = _published(handed, tmp_path / "size")
    assert [(tmp_path / "size" / name).read_text() for name in files] == ["ab\ncd\n", "ef\ng\n"]
    assert [name.rsplit("-", 1)[1] for name in files] == ["0", "1"]

    on_checkpoint, handed = _writer(tmp_path / "checkpoint", RollingPolicy.on_checkpoint_rolling_policy(), clock)
    on_checkpoint.process_batch(["x" * 1000])
    on_checkpoint.prepare_snapshot(False)  # an epoch that is no checkpoint: the file stays open
    assert [name for _path, name in handed] == [None]
    handed.clear()
    on_checkpoint.prepare_snapshot(True)
    assert [name is not None for _path, name in handed] == [True]
    on_checkpoint.prepare_snapshot(True)  # nothing open, nothing to hand on
    assert len(handed) == 1

    policy = RollingPolicy.default_rolling_policy(rollover_interval=10_000, inactivity_interval=3_000)
    by_time, handed = _writer(tmp_path / "time", policy, clock, check_interval=1_000)
    by_time.process("early", None)
    assert by_time.next_processing_timer() == 1_000
    clock.time = 2_000
    by_time.advance_processing_time(2_000)
    by_time.process("late", None)
    clock.time = 4_999
    by_time.advance_processing_time(4_999)  # written to 2.999 s ago: not inactive yet
    by_time.prepare_snapshot(True)
    assert [name for _path, name in handed] == [None]
    # Inactive from 5 s on, but a policy is asked only at bucket checks (the next at 5.999 s).
    by_time.advance_processing_time(5_500)
    assert by_time.buckets[""].part is not None
    by_time.advance_processing_time(5_999)
    assert by_time.next_processing_timer() is None  # nothing open: no bucket check is due
    by_time.prepare_snapshot(True)
    assert (tmp_path / "time" / _published(handed, tmp_path / "time")[0]).read_text() == "early\nlate\n"


def test_a_writer_given_two_old_subtasks_state_goes_on_with_one_and_commits_the_other(tmp_path) -> None:
    clock = EpochClock(0)
    snapshots = []
    for index, word in enumerate(("first", "second")):
        writer, _handed = _writer(tmp_path, RollingPolicy.default_rolling_policy(), clock, index=index)
        writer.process(word, None)
        writer.prepare_snapshot(True)
        snapshots.append(writer.snapshot_operator_state())
    merged, handed = _writer(tmp_path, RollingPolicy.default_rolling_policy(), clock)
    for snapshot in snapshots:
        merged.restore_operator_state(snapshot)
    merged.process("third", None)
    merged.prepare_snapshot(True)
    parts = [snapshot["buckets"][""]["part"] for snapshot in snapshots]
    assert sorted(handed, key=str) == sorted([(parts[0][0], None), parts[1][:2]], key=str)
    merged.end_input()
    contents = sorted((tmp_path / name).read_text() for name in _published(handed, tmp_path))
    assert contents == ["first\nthird\n", "second\n"]


def test_rolling_policy_arguments_are_checked() -> None:
    with pytest.raises(errors.InvalidArgumentError, match="part_size must be a positive int"):
        RollingPolicy.default_rolling_policy(part_size=0)
    with pytest.raises(errors.InvalidTypeError, match="needs a RollingPolicy"):
        FileSink.for_row_format("/tmp/x", Encoder.simple_string_encoder()).with_rolling_policy("daily")
    with pytest.raises(errors.InvalidArgumentError, match="bucket check interval"):
        FileSink.for_row_format("/tmp/x", Encoder.simple_string_encoder()).with_bucket_check_interval(-1)


class _FailOnce(flowmagic.MapFunction):
    """Fails its subtask once, in the middle of an epoch, after records of it were written."""

    def __init__(self, marker: str):
        self.marker = marker

    def map(self, value):
        if value[1] == 30 and not os.path.exists(self.marker):
            Path(self.marker).write_text("failed")
            raise RuntimeError("a task fails once")
        return value


def _program(env, server: LineServer, output: Path, marker: Path, policy: RollingPolicy) -> None:
    env.enable_checkpointing(300)
    sink = (
        FileSink.for_row_format(str(output), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(policy)
        .build()
    )
    (
        env.socket_text_stream("127.0.0.1", server.port)
        .map(lambda line: (line, 1))
        .key_by(lambda pair: pair[0])
        .sum(1)
        .map(_FailOnce(str(marker)))
        .sink_to(sink)
    )


def _committed_counts(output: Path) -> dict[str, list[int]]:
    counts: dict[str, list[int]] = {}
    for path in sorted(output.iterdir()):
        if path.name.startswith("."):
            continue
        for line in path.read_text().splitlines():
            key, value = line.strip("()").split(",")
            counts.setdefault(key, []).append(int(value))
    return {key: sorted(values) for key, values in counts.items()}


@pytest.mark.e2e
def test_files_are_committed_by_checkpoints_exactly_once_across_a_failure_a_savepoint_and_a_rescale(
    spark, tmp_path
) -> None:
    from flowmagic import compile as passes
    from flowmagic.runtime import start_continuous
    from flowmagic.vocabulary.pipeline_config import ContinuousOptions

    output, marker, savepoint = tmp_path / "out", tmp_path / "failed-once", str(tmp_path / "savepoint")
    policy = RollingPolicy.default_rolling_policy(part_size=300)

    def run(parallelism: int, server: LineServer, restore: str | None):
        env = flowmagic.StreamExecutionEnvironment(parallelism=parallelism)
        _program(env, server, output, marker, policy)
        graph = passes.build(env.get_stream_graph("file sink")).execution_graph
        options = env.continuous_options()
        if restore is not None:
            options = ContinuousOptions(options.checkpoint_interval_ms, None, restore, False)
        return start_continuous(graph, options=options)

    first = LineServer()
    job = run(2, first, None)
    for round_ in range(8):
        first.send(*(f"k{i % 5}" for i in range(round_ * 25, round_ * 25 + 25)))
        wait_for(lambda n=round_: job.epochs > n, job)
    wait_for(lambda: job.checkpoints.completed >= 2 and job.committed, job)
    assert marker.exists()  # the retried task truncated its open file and wrote the epoch again
    job.stop_with_savepoint(savepoint)
    assert job.get_job_status() is JobStatus.FINISHED
    first.close()

    second = LineServer()
    restored = run(3, second, savepoint)
    second.send(*(f"k{i % 5}" for i in range(200, 300)))
    second.close()  # the source ends, the job's input ends: every part file is committed
    assert restored.wait(120) is JobStatus.FINISHED
    assert _committed_counts(output) == {f"k{k}": list(range(1, 61)) for k in range(5)}
    assert not [path.name for path in output.iterdir() if path.name.startswith(".")]
    assert set(restored.result().committed) <= {str(path) for path in output.iterdir()}


@pytest.mark.e2e
def test_stop_with_savepoint_under_load_commits_and_a_restored_job_goes_on_from_it(spark, tmp_path) -> None:
    import time

    from flowmagic import compile as passes
    from flowmagic.runtime import start_continuous
    from flowmagic.vocabulary.pipeline_config import ContinuousOptions

    output, savepoints = tmp_path / "out", [str(tmp_path / "sp1"), str(tmp_path / "sp2")]

    def run(restore: str | None):
        env = flowmagic.StreamExecutionEnvironment(parallelism=2)
        env.enable_checkpointing(60_000)  # only the savepoints commit
        # Rolled at checkpoints and savepoints (the default policy would keep the open file in
        # progress across the savepoint, as Flink does, and go on with it after the restore).
        policy = RollingPolicy.on_checkpoint_rolling_policy()
        sink = (
            FileSink.for_row_format(str(output), Encoder.simple_string_encoder())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .with_rolling_policy(policy)
            .build()
        )
        # As fast as admission lets the generator go.
        env.from_datagen(lambda i: (f"k{i % 10}", 1)).key_by(lambda p: p[0]).sum(1).uid("count").sink_to(sink)
        graph = passes.build(env.get_stream_graph("under load")).execution_graph
        return start_continuous(graph, options=ContinuousOptions(60_000, None, restore, False))

    first = run(None)
    wait_for(lambda: first.epochs >= 4, first)
    asked = time.time()
    first.stop_with_savepoint(savepoints[0])
    assert time.time() - asked < 10
    assert first.get_job_status() is JobStatus.FINISHED
    before = _committed_counts(output)
    assert sum(len(values) for values in before.values()) > 1000

    second = run(savepoints[0])
    wait_for(lambda: second.epochs >= 2, second)
    second.stop_with_savepoint(savepoints[1])
    after = _committed_counts(output)
    for key, values in after.items():
        assert values == list(range(1, len(values) + 1)), key
        assert len(values) > len(before[key])


def test_the_driver_deletes_failed_attempts_files_in_every_bucket_its_writers_used(tmp_path) -> None:
    from flowmagic.runtime.continuous.file_commit import FileCommits

    writer, other = "0f0e0d0c-0b0a-4908-8706-050403020100", "1f1e1d1c-1b1a-4918-9716-151413121110"
    bucket = tmp_path / "2026-11-24--13"
    bucket.mkdir()
    kept, rolled, orphan = (bucket / f".part-{writer}-{n}.inprogress.{n:032x}" for n in range(3))
    foreign = bucket / f".part-{other}-0.inprogress.{0:032x}"
    for path in (kept, rolled, orphan, foreign):
        path.write_text("x\n")
    commits = FileCommits([str(tmp_path)])
    commits.begin_epoch()
    commits.take(("open", str(kept), None))
    commits.take(("commit", str(rolled), str(bucket / f"part-{writer}-1")))
    commits.delete_orphans()
    # Another job's writer (not reported to this job) keeps its file.
    assert sorted(path.name for path in bucket.iterdir()) == sorted([kept.name, rolled.name, foreign.name])
