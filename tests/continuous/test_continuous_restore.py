"""Restores in the continuous mode, Flink's way: sources' positions are operator state, kept in
savepoints and retained checkpoints under the source's operator ID; checkpoints are kept per
job (``<checkpoint dir>/<job id>/chk-N``) and a retained one restores like a savepoint; state
restored into an incompatible descriptor is refused.

Every record a source makes carries its index, so "exactly once" is checked record by record
across the stop and the restore, not only by per-key counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from continuous_support import Printed, start, wait_for

import flowmagic
from flowmagic import errors
from flowmagic.runtime.continuous.job import JobStatus
from flowmagic.vocabulary.configuration import Configuration

pytestmark = pytest.mark.e2e


class Records(Printed):
    """What a job's print sink printed, as ``(key, index, count)`` (see :class:`_Count`)."""

    def rows(self) -> list[tuple[str, int, int]]:
        with self._lock:
            lines = list(self.lines)
        rows = []
        for line in lines:
            key, index, count = line.split("> ", 1)[-1].strip("()").split(",")
            rows.append((key.strip().strip("'"), int(index), int(count)))
        return rows


class _Count(flowmagic.KeyedProcessFunction):
    """Emits ``(key, index, how many records of the key so far)``: keyed state in a ValueState."""

    def open(self, runtime_context) -> None:
        self.count = runtime_context.get_state(flowmagic.ValueStateDescriptor("count", None))

    def process_element(self, value, ctx, out):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        out.collect((value[0], value[1], count))


def _numbered(env: flowmagic.StreamExecutionEnvironment, edited: bool, rows_per_second: float | None = 300) -> None:
    numbers = env.from_datagen(lambda i: i, rows_per_second=rows_per_second).uid("numbers")
    if edited:
        # Another map (and an added filter): the uids stay, so does every operator's state.
        pairs = numbers.filter(lambda i: i >= 0).map(lambda i: (f"k{i % 5}", int(i)))
    else:
        pairs = numbers.map(lambda i: (f"k{i % 5}", i))
    pairs.key_by(lambda pair: pair[0]).process(_Count()).uid("counts").print()


def _restoring(path: str, parallelism: int, allow: bool = False) -> flowmagic.StreamExecutionEnvironment:
    configuration = Configuration().set_string("execution.savepoint.path", path)
    configuration.set_boolean("execution.savepoint.ignore-unclaimed-state", allow)
    env = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    env.set_parallelism(parallelism)
    return env


def assert_exactly_once(before: list[tuple[str, int, int]], after: list[tuple[str, int, int]]) -> None:
    """Every index from 0 up came once over both runs, and each key counted 1, 2, 3, ... across
    them, each count once (records of a key from several subtasks interleave, as in Flink)."""
    indices = sorted(index for _key, index, _count in before + after)
    assert indices == list(range(len(indices))), (indices[:10], len(indices), len(set(indices)))
    counts: dict[str, list[int]] = {}
    for key, _index, count in before + after:
        counts.setdefault(key, []).append(count)
    for key, values in counts.items():
        assert sorted(values) == list(range(1, len(values) + 1)), key


def test_stop_with_savepoint_edit_and_restore_at_another_parallelism_processes_every_record_once(
    spark, tmp_path
) -> None:
    first = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _numbered(first, edited=False)
    before = Records()
    job = start(first, before, "before")
    wait_for(lambda: job.epochs >= 3 and len(before.rows()) >= 100, job)
    savepoint = job.stop_with_savepoint(str(tmp_path / "sp"))
    assert job.get_job_status() is JobStatus.FINISHED
    read = len(before.rows())

    second = _restoring(savepoint, 3)
    _numbered(second, edited=True)
    after = Records()
    restored = start(second, after, "after")
    wait_for(lambda: len(after.rows()) >= 100, restored)
    restored.cancel()
    # The generator went on from where the savepoint left it, at parallelism 3.
    assert min(index for _key, index, _count in after.rows()) == read
    assert_exactly_once(before.rows(), after.rows())


def test_a_rate_limited_generator_goes_on_at_its_rate_at_once_after_a_restore(spark, tmp_path) -> None:
    first = flowmagic.StreamExecutionEnvironment(parallelism=2)
    # As fast as admission lets it: far ahead of what 200 records/s would have made by now.
    _numbered(first, edited=False, rows_per_second=None)
    before = Records()
    job = start(first, before, "fast")
    wait_for(lambda: len(before.rows()) >= 40_000, job, timeout=240)
    savepoint = job.stop_with_savepoint(str(tmp_path / "sp"))
    read = len(before.rows())

    second = _restoring(savepoint, 2)
    _numbered(second, edited=False, rows_per_second=200)
    after = Records()
    restored = start(second, after, "paced")
    # At 200 records/s counted from the generator's first start, index 40,000 would come
    # after 200 s; counted from the restored job's start, within a second of it running.
    wait_for(lambda: len(after.rows()) >= 100, restored, timeout=90)
    restored.cancel()
    assert min(index for _key, index, _count in after.rows()) == read
    assert_exactly_once(before.rows(), after.rows())


def _with_a_collection(env: flowmagic.StreamExecutionEnvironment) -> None:
    numbers = env.from_datagen(lambda i: i, rows_per_second=200).uid("numbers").map(lambda i: (f"k{i % 3}", i))
    listed = env.from_collection([("listed", -1 - j) for j in range(10)]).uid("listed")
    numbers.union(listed).key_by(lambda pair: pair[0]).process(_Count()).uid("counts").print()


def test_a_collection_read_before_the_savepoint_is_not_read_again(spark, tmp_path) -> None:
    first = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _with_a_collection(first)
    before = Records()
    job = start(first, before, "with a collection")
    wait_for(lambda: len([row for row in before.rows() if row[1] >= 0]) >= 50, job)
    savepoint = job.stop_with_savepoint(str(tmp_path / "sp"))

    second = _restoring(savepoint, 1)
    _with_a_collection(second)
    after = Records()
    restored = start(second, after, "restored with a collection")
    wait_for(lambda: len(after.rows()) >= 50, restored)
    restored.cancel()
    # A finished source stays finished: its records came once, in the first run.
    listed = sorted(index for _key, index, _count in before.rows() + after.rows() if index < 0)
    assert listed == list(range(-10, 0))
    assert_exactly_once([row for row in before.rows() if row[1] >= 0], [row for row in after.rows() if row[1] >= 0])


def _checkpointed(env: flowmagic.StreamExecutionEnvironment, storage: Path, counts_uid: str = "counts") -> None:
    from flowmagic.datastream import ExternalizedCheckpointRetention

    env.enable_checkpointing(200)
    env.get_checkpoint_config().set_checkpoint_storage(f"file://{storage}")
    env.get_checkpoint_config().set_externalized_checkpoint_retention(
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
    )
    numbers = env.from_datagen(lambda i: i, rows_per_second=300).uid("numbers")
    numbers.map(lambda i: (f"k{i % 5}", i)).key_by(lambda pair: pair[0]).process(_Count()).uid(counts_uid).print()


def test_a_retained_checkpoint_restores_like_a_savepoint_and_checkpoints_are_kept_per_job(spark, tmp_path) -> None:
    storage = tmp_path / "checkpoints"
    first = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _checkpointed(first, storage)
    before = Records()
    job = start(first, before, "first run")
    wait_for(lambda: job.checkpoints.completed >= 3 and len(before.rows()) >= 60, job)
    job.cancel()
    # Flink's layout: <checkpoint dir>/<job id>/chk-<n>/_metadata, the last one retained on cancel.
    (retained,) = (storage / job.get_job_id()).glob("chk-*")
    assert retained.name == f"chk-{job.checkpoints.completed}" and (retained / "_metadata.json").exists()
    metadata = (retained / "_metadata.json").read_bytes()

    # The same checkpoint directory without a restore path is a new job: it starts afresh.
    fresh_env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _checkpointed(fresh_env, storage)
    fresh_rows = Records()
    fresh = start(fresh_env, fresh_rows, "fresh run")
    wait_for(lambda: len(fresh_rows.rows()) >= 10, fresh)
    fresh.cancel()
    assert min(index for _key, index, _count in fresh_rows.rows()) == 0
    assert fresh.get_job_id() != job.get_job_id()
    assert (retained / "_metadata.json").read_bytes() == metadata  # the first job's checkpoint untouched

    # A changed uid: the retained checkpoint's state of "counts" has no operator to go to.
    changed = _restoring(str(retained), 3)
    _checkpointed(changed, storage, counts_uid="renamed counts")
    with pytest.raises(errors.NonRestoredStateError, match="Cannot map checkpoint/savepoint state for operator"):
        start(changed, Records(), "changed uid")

    second = _restoring(str(retained), 3)
    _checkpointed(second, storage)
    after = Records()
    restored = start(second, after, "restored from chk")
    wait_for(lambda: len(after.rows()) >= 60, restored)
    restored.cancel()
    # What came after the retained checkpoint in the first run comes again (as in Flink), so
    # compare with the first run's records up to the checkpoint's position.
    position = min(index for _key, index, _count in after.rows())
    assert_exactly_once([row for row in before.rows() if row[1] < position], after.rows())


def test_a_job_directory_without_a_checkpoint_in_it_is_named_with_its_retained_checkpoints(spark, tmp_path) -> None:
    storage = tmp_path / "checkpoints"
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    _checkpointed(env, storage)
    job = start(env, Records(), "to restore")
    wait_for(lambda: job.checkpoints.completed >= 2, job)
    job.cancel()
    restoring = _restoring(str(storage / job.get_job_id()), 1)
    _checkpointed(restoring, storage)
    with pytest.raises(errors.JobError, match=r"retained checkpoints.*chk-\d+"):
        start(restoring, Records(), "from the job directory")


class _CountInAList(flowmagic.KeyedProcessFunction):
    def open(self, runtime_context) -> None:
        self.count = runtime_context.get_list_state(flowmagic.ListStateDescriptor("count", None))

    def process_element(self, value, ctx, out):
        self.count.add(value)
        out.collect((value[0], value[1], len(list(self.count.get()))))


def test_state_restored_into_a_descriptor_of_another_kind_is_refused_naming_the_operator_and_the_state(
    spark, tmp_path
) -> None:
    first = flowmagic.StreamExecutionEnvironment(parallelism=1)
    _numbered(first, edited=False)
    before = Records()
    job = start(first, before, "value state")
    wait_for(lambda: len(before.rows()) >= 20, job)
    savepoint = job.stop_with_savepoint(str(tmp_path / "sp"))

    second = _restoring(savepoint, 1)
    numbers = second.from_datagen(lambda i: i, rows_per_second=300).uid("numbers")
    pairs = numbers.map(lambda i: (f"k{i % 5}", i))
    pairs.key_by(lambda pair: pair[0]).process(_CountInAList()).uid("counts").name("list counts").print()
    with pytest.raises(errors.JobError) as refused:
        start(second, Records(), "list state").wait(120)
    message = str(refused.value)
    assert "Incompatible key/value state types. Was [VALUE], registered with [LIST]." in message
    assert "'count'" in message and "list counts" in message


def _lines(env: flowmagic.StreamExecutionEnvironment, port: int) -> None:
    lines = env.socket_text_stream("127.0.0.1", port).uid("lines")
    pairs = lines.map(lambda line: (f"k{int(line) % 3}", int(line)))
    pairs.key_by(lambda pair: pair[0]).process(_Count()).uid("counts").print()


def test_a_sockets_lines_received_but_not_processed_at_a_savepoint_are_processed_by_the_restored_job(
    spark, tmp_path
) -> None:
    from continuous_support import LineServer

    total = 20_000
    first_server = LineServer()
    first = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _lines(first, first_server.port)
    before = Records()
    job = start(first, before, "socket")
    first_server.send(*(str(i) for i in range(total)))
    wait_for(lambda: len(before.rows()) > 0, job)
    # Admission takes 1,000 lines into the first epoch, twice as many into each next one:
    # the savepoint comes before the job read them all.
    savepoint = job.stop_with_savepoint(str(tmp_path / "sp"))
    first_server.close()
    assert len(before.rows()) < total

    second_server = LineServer()
    second = _restoring(savepoint, 3)
    _lines(second, second_server.port)
    after = Records()
    restored = start(second, after, "socket restored")
    wait_for(lambda: len(before.rows()) + len(after.rows()) >= total, restored)
    second_server.send(*(str(i) for i in range(total, total + 10)))
    wait_for(lambda: len(before.rows()) + len(after.rows()) >= total + 10, restored)
    restored.cancel()
    second_server.close()
    assert_exactly_once(before.rows(), after.rows())


def test_a_monitored_file_sources_position_names_the_files_not_read_to_their_end(tmp_path) -> None:
    from flowmagic.runtime.continuous.file_monitor import FileMonitor
    from flowmagic.runtime.continuous.sources import read_log_range

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "1.txt").write_text("a\nb\n")
    (inbox / "2.txt").write_text("c\nd\ne\n")
    monitor = FileMonitor([str(inbox)], "UTF-8", 50, str(tmp_path / "log"))
    monitor.start()
    wait_for(lambda: monitor.count == 5)
    monitor.stop()
    # Three lines read: the first file whole, one line of the second.
    position = monitor.position(3)
    assert position == {"seen": [str(inbox / "1.txt"), str(inbox / "2.txt")], "pending": [[str(inbox / "2.txt"), 1]]}

    (inbox / "3.txt").write_text("f\n")
    restored = FileMonitor([str(inbox)], "UTF-8", 50, str(tmp_path / "restored"), position)
    restored.start()
    wait_for(lambda: restored.count == 3)
    restored.stop()
    # The rest of the second file first, then the new one; the first is not read again.
    assert list(read_log_range(str(tmp_path / "restored"), 0, 3)) == ["d", "e", "f"]
    # Read one line of the rest: the second file is still one to finish, from its line 2.
    assert restored.position(1)["pending"] == [[str(inbox / "2.txt"), 2], [str(inbox / "3.txt"), 0]]


def test_a_state_declared_with_another_type_than_restored_is_refused_in_flinks_words() -> None:
    from flowmagic.common import Types
    from flowmagic.runtime.operators.context import KeyedStateStore
    from flowmagic.runtime.state.keyed_state import IncompatibleStateError, KeyedStateBackend

    backend = KeyedStateBackend()
    backend.restored_declarations = {"count": ("VALUE", "Integer"), "seen": ("LIST", None)}
    store = KeyedStateStore(backend)
    store.get_state(flowmagic.ValueStateDescriptor("count", Types.INT()))
    store.get_state(flowmagic.ValueStateDescriptor("new", Types.STRING()))
    with pytest.raises(IncompatibleStateError, match=r"Was \[LIST\], registered with \[MAP\]\. \(keyed state 'seen'"):
        store.get_map_state(flowmagic.MapStateDescriptor("seen", Types.STRING(), Types.INT()))
    with pytest.raises(
        IncompatibleStateError,
        match=r"the new state serializer \(String\) must not be incompatible with the old state serializer \(Integer\)",
    ):
        store.get_state(flowmagic.ValueStateDescriptor("count", Types.STRING()))
    # What the subtask reports for the next snapshots: the states it declared.
    assert backend.declared == {"count": ("VALUE", "Integer"), "new": ("VALUE", "String")}


def test_checkpoint_retention_and_the_number_retained_are_flinks_options() -> None:
    from flowmagic.datastream import ExternalizedCheckpointRetention

    configuration = Configuration()
    configuration.set_string("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
    configuration.set_string("execution.checkpointing.num-retained", "3")
    env = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    config = env.get_checkpoint_config()
    assert config.get_externalized_checkpoint_retention() is ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
    assert config.get_num_retained_checkpoints() == 3 and config.is_externalized_checkpoints_enabled()
    options = env.continuous_options()
    assert (options.checkpoint_retention, options.checkpoints_retained) == ("RETAIN_ON_CANCELLATION", 3)
    default = flowmagic.StreamExecutionEnvironment().get_checkpoint_config()
    assert default.get_externalized_checkpoint_retention().name == "NO_EXTERNALIZED_CHECKPOINTS"
    wrong = Configuration().set_string("execution.checkpointing.externalized-checkpoint-retention", "KEEP")
    with pytest.raises(errors.InvalidArgumentError, match="Could not parse value 'KEEP' for key"):
        flowmagic.StreamExecutionEnvironment.get_execution_environment(wrong)
