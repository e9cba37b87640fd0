"""Checkpoint data is data, not code: savepoints and checkpoints on a real local Spark, read
back after someone (or something) changed their files.

A savepoint is copied between machines and users, so what restoring reads is checked before
any of it is unpickled: its manifest must be signed with the user's state key, every path in
it must stay inside the savepoint, and every file must have the size and SHA-256 the manifest
recorded. Corruption is one clear error naming the file and the operator, raised when the
job is created (before any Spark task runs). A full disk names the path, leaves no temporary
file, and the previous checkpoint restores.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from continuous_support import Printed, running_counts, start, wait_for

import flowmagic
from flowmagic import errors
from flowmagic.runtime.continuous.job import JobStatus
from flowmagic.vocabulary.configuration import Configuration

pytestmark = pytest.mark.e2e


def _program(env: flowmagic.StreamExecutionEnvironment) -> None:
    source = env.from_datagen(lambda i: (f"k{i % 5}", 1), rows_per_second=300)
    source.key_by(lambda p: p[0]).sum(1).uid("counts").name("running counts").print()


@pytest.fixture(scope="module")
def savepoint(spark, tmp_path_factory) -> tuple[Path, dict[str, int]]:
    """A savepoint of a running count (and each key's last count), written once."""
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    _program(env)
    printed = Printed()
    job = start(env, printed, "counts")
    wait_for(lambda: job.epochs >= 3 and len(set(running_counts(printed.pairs()))) == 5, job)
    path = tmp_path_factory.mktemp("integrity") / "savepoint"
    job.stop_with_savepoint(str(path))
    last = {key: values[-1] for key, values in running_counts(printed.pairs()).items()}
    return path, last


def _copy(savepoint: tuple[Path, dict[str, int]], tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(savepoint[0], copy)
    return copy


def _manifest(path: Path) -> dict:
    return json.loads((path / "_metadata.json").read_text())


def _state_files(path: Path) -> list[str]:
    """The keyed state files the savepoint's manifest names, relative to it."""
    return [entry[0] for state in _manifest(path)["operators"].values() for entry in state["files"]]


def _restore(path: Path, printed: Printed | None = None):
    configuration = Configuration().set_string("execution.savepoint.path", str(path))
    env = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    env.set_parallelism(2)
    _program(env)
    return start(env, printed or Printed(), "restored")


def _refused(path: Path) -> errors.JobError:
    """The error restoring from ``path`` raises when the job is created (never a job that runs)."""
    try:
        job = _restore(path)
    except errors.JobError as error:
        return error
    job.cancel()
    pytest.fail(f"the job restored from {path} and ran")


class _CreatesMarker:
    """What a crafted state file holds: unpickling it creates ``path`` (any code could run)."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.mark.parametrize("manifest_too", [False, True], ids=["file", "file-and-its-checksum"])
def test_a_crafted_pickle_in_a_savepoint_is_refused_before_it_is_unpickled(
    savepoint, tmp_path, monkeypatch, manifest_too
) -> None:
    copy = _copy(savepoint, tmp_path)
    marker = tmp_path / "marker"
    crafted = pickle.dumps(_CreatesMarker(marker))
    target = _state_files(copy)[0]
    (copy / target).write_bytes(crafted)
    if manifest_too:
        # Whoever crafted the file also wrote its size and digest into the manifest.
        manifest = _manifest(copy)
        manifest.setdefault("checksums", {})[target] = [len(crafted), hashlib.sha256(crafted).hexdigest()]
        (copy / "_metadata.json").write_text(json.dumps(manifest))
    error = _refused(copy)
    assert not marker.exists()
    if manifest_too:
        assert "_metadata.json" in str(error) and "not signed" in str(error)
    else:
        assert target in str(error) and "running counts" in str(error)
    assert isinstance(error, errors.StateIntegrityError)


def test_a_manifest_naming_paths_outside_the_savepoint_is_refused(savepoint, tmp_path) -> None:
    copy = _copy(savepoint, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    manifest = _manifest(copy)
    state = next(iter(manifest["operators"].values()))
    first = state["files"][0][0]
    # A real state file, moved out of the savepoint: only its path is wrong.
    shutil.move(copy / first, outside / "state.pkl")
    escaping = "../outside/state.pkl"
    state["files"][0][0] = escaping
    if "checksums" in manifest:
        manifest["checksums"][escaping] = manifest["checksums"].pop(first)
    (copy / "_metadata.json").write_text(json.dumps(manifest))
    error = _refused(copy)
    assert isinstance(error, errors.StateIntegrityError)
    # Trusting the savepoint (signing its manifest anew) checks its paths first.
    from flowmagic.runtime import trust_savepoint

    with pytest.raises(errors.StateIntegrityError, match=r"\.\./outside/state\.pkl.*outside the savepoint"):
        trust_savepoint(str(copy))


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize(
    ("case", "damage"),
    [
        ("truncated manifest", lambda copy: _truncate(copy / "_metadata.json")),
        ("garbage manifest", lambda copy: (copy / "_metadata.json").write_bytes(bytes(range(256)) * 4)),
        ("manifest without its fields", lambda copy: (copy / "_metadata.json").write_text('{"epoch": 3}')),
        ("truncated state file", lambda copy: _truncate(copy / _state_files(copy)[0])),
        ("empty state file", lambda copy: (copy / _state_files(copy)[0]).write_bytes(b"")),
        ("missing state file", lambda copy: (copy / _state_files(copy)[0]).unlink()),
    ],
)
def test_a_damaged_savepoint_is_one_clear_error_naming_the_file_before_any_task_runs(
    savepoint, tmp_path, case, damage
) -> None:
    copy = _copy(savepoint, tmp_path)
    named = "_metadata.json" if "manifest" in case else _state_files(copy)[0]
    damage(copy)
    error = _refused(copy)
    assert isinstance(error, errors.StateIntegrityError)
    assert named in str(error) and str(copy) in str(error)
    if "state file" in case:
        assert "running counts" in str(error)


def test_a_savepoint_of_another_user_is_refused_until_trusted_and_then_restores(
    savepoint, tmp_path, monkeypatch
) -> None:
    copy = _copy(savepoint, tmp_path)
    # Another user (or machine): another config directory, so another state key.
    monkeypatch.delenv("FLOWMAGIC_STATE_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "other-user"))
    error = _refused(copy)
    key_file = tmp_path / "other-user" / "flowmagic" / "state.key"
    assert isinstance(error, errors.StateIntegrityError)
    assert str(key_file) in str(error) and "trust_savepoint" in str(error)
    assert key_file.stat().st_mode & 0o777 == 0o600
    from flowmagic.runtime import trust_savepoint

    trust_savepoint(str(copy))
    printed = Printed()
    restored = _restore(copy, printed)
    last = savepoint[1]
    wait_for(lambda: set(running_counts(printed.pairs())) == set(last), restored)
    restored.cancel()
    for key, values in running_counts(printed.pairs()).items():
        assert values == list(range(last[key] + 1, last[key] + 1 + len(values))), key


def test_state_files_are_checked_by_the_executor_that_reads_them(tmp_path) -> None:
    # The driver checks a savepoint before its job starts; a subtask restoring later reads
    # the files again, and checks them against the digests the driver sent with its task.
    from flowmagic.runtime.continuous.state_store import load_keyed, write_keyed
    from flowmagic.runtime.continuous.storage import Storage

    storage = Storage(str(tmp_path / "checkpoint"))
    checksums: dict = {}
    files = [write_keyed(storage, "epoch-1", "op", 0, 0, range(128), 128, {"a": {"n": 1}}, checksums=checksums)]
    assert load_keyed(storage, files, range(128), checksums=checksums) == {"a": {"n": 1}}
    marker = tmp_path / "marker"
    (tmp_path / "checkpoint" / files[0].path).write_bytes(pickle.dumps(_CreatesMarker(marker)))
    with pytest.raises(errors.StateIntegrityError, match=files[0].path):
        load_keyed(storage, files, range(128), checksums=checksums)
    assert not marker.exists()


def test_progress_files_are_read_without_looking_up_any_class(tmp_path) -> None:
    from flowmagic.runtime.continuous.state_store import Checksum, load_progress, write_progress
    from flowmagic.runtime.continuous.storage import Storage

    storage = Storage(str(tmp_path / "checkpoint"))
    checksums: dict = {}
    progress = {"channels": {(0, 1): -(2**63)}, "statuses": ({(0, 1)}, set(), False), "operators": {3: (None, 5)}}
    write_progress(storage, "progress/v-0-0.pkl", progress, checksums=checksums)
    assert load_progress(storage, "progress/v-0-0.pkl", checksums=checksums) == progress
    # Even a file whose checksum matches (the driver trusts its manifest) runs nothing.
    marker = tmp_path / "marker"
    crafted = pickle.dumps(_CreatesMarker(marker))
    (tmp_path / "checkpoint" / "progress" / "v-0-0.pkl").write_bytes(crafted)
    with pytest.raises(pickle.UnpicklingError, match="plain data only"):
        load_progress(storage, "progress/v-0-0.pkl", checksums={"progress/v-0-0.pkl": Checksum.of(crafted)})
    assert not marker.exists()


def test_a_link_inside_a_local_directory_does_not_lead_a_reader_out(tmp_path) -> None:
    from flowmagic.runtime.continuous.storage import Storage

    (tmp_path / "secret").write_text("not state")
    (tmp_path / "savepoint" / "state").mkdir(parents=True)
    (tmp_path / "savepoint" / "state" / "0-0.pkl").symlink_to(tmp_path / "secret")
    with pytest.raises(errors.StateIntegrityError, match="leads outside"):
        Storage(str(tmp_path / "savepoint")).read("state/0-0.pkl")


def test_the_state_key_is_made_once_for_its_owner_only_and_refused_if_others_can_read_it(tmp_path, monkeypatch) -> None:
    from flowmagic.runtime.continuous.state_key import state_key

    monkeypatch.delenv("FLOWMAGIC_STATE_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    key_file = tmp_path / "config" / "flowmagic" / "state.key"
    key = state_key()
    assert len(key) == 64 and key_file.read_text().strip().encode() == key
    assert key_file.stat().st_mode & 0o777 == 0o600 and key_file.parent.stat().st_mode & 0o777 == 0o700
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "shared"))
    shared = tmp_path / "shared" / "flowmagic" / "state.key"
    shared.parent.mkdir(parents=True)
    shared.write_text("a key others can read\n")
    shared.chmod(0o644)
    with pytest.raises(errors.StateIntegrityError, match=r"chmod 600"):
        state_key()
    monkeypatch.setenv("FLOWMAGIC_STATE_KEY", "the same key on every driver")
    assert state_key() == b"the same key on every driver"


@pytest.mark.parametrize("location", ["/tmp/checkpoints", "s3a://bucket/checkpoints", "hdfs://namenode/checkpoints"])
@pytest.mark.parametrize("path", ["../x.pkl", "state/../../x.pkl", "state/..", "/etc/passwd"])
def test_storage_refuses_paths_outside_its_directory(location, path) -> None:
    from flowmagic.runtime.continuous.storage import Storage

    with pytest.raises(errors.StateIntegrityError, match="outside"):
        Storage(location).path(path)


# -- a full disk ----------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A real 32 MB file system (tmpfs): mounting one needs root (CAP_SYS_ADMIN), as CI has."""
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        if subprocess.run(["umount", str(mount_point)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)], check=True)


class _KeepsABigValue(flowmagic.KeyedProcessFunction):
    """A count per key, next to 200 KB of state per key: every epoch writes a lot."""

    def open(self, runtime_context) -> None:
        self.count = runtime_context.get_state(flowmagic.ValueStateDescriptor("count", None))
        self.blob = runtime_context.get_state(flowmagic.ValueStateDescriptor("blob", None))

    def process_element(self, value, ctx, out):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        self.blob.update(os.urandom(200_000))
        out.collect(f"({value[0]},{count})")


def _big_state_program(checkpoints: Path, restore: Path | None = None) -> flowmagic.StreamExecutionEnvironment:
    configuration = Configuration()
    if restore is not None:
        configuration.set_string("execution.savepoint.path", str(restore))
    # Checkpoints kept when the job fails, to restore from.
    configuration.set_string("execution.checkpointing.externalized-checkpoint-retention", "DELETE_ON_CANCELLATION")
    # Without a restart strategy: with checkpointing, Flink's default restarts the job (for
    # ever, while the disk stays full), where this test wants the failure itself.
    configuration.set_string("restart-strategy.type", "none")
    env = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    env.set_parallelism(2)
    env.enable_checkpointing(200)
    env.get_checkpoint_config().set_checkpoint_storage(f"file://{checkpoints}")
    source = env.from_datagen(lambda i: (f"k{i % 4}", 1), rows_per_second=40)
    source.key_by(lambda p: p[0]).process(_KeepsABigValue()).uid("big").name("big state").print()
    return env


def test_a_full_disk_names_the_path_leaves_no_temporary_file_and_the_last_checkpoint_restores(
    spark, small_disk
) -> None:
    checkpoints = small_disk / "checkpoints"
    printed = Printed()
    job = start(_big_state_program(checkpoints), printed, "big state")
    wait_for(lambda: job.checkpoints.completed >= 2 and len(printed.pairs()) >= 20, job)
    # Fill the disk but for 64 KB, at once: the next epoch's 200 KB state files do not fit.
    free = os.statvfs(small_disk)
    with open(small_disk / "filler", "wb") as filler:
        os.posix_fallocate(filler.fileno(), 0, free.f_bavail * free.f_frsize - 64 * 1024)
    with pytest.raises(errors.JobFailedError) as failure:
        job.wait(180)
    message = str(failure.value)
    assert "No space left on device" in message and str(checkpoints) in message, message
    assert job.get_job_status() is JobStatus.FAILED
    leftovers = [str(path) for path in small_disk.rglob("*") if path.name.endswith(".tmp")]
    assert leftovers == []
    # The last checkpoint is whole: a job restored from it goes on from it.
    last = {key: values[-1] for key, values in running_counts(printed.pairs()).items()}
    (small_disk / "filler").unlink()
    (retained,) = (checkpoints / job.get_job_id()).glob("chk-*")
    printed_again = Printed()
    resumed = start(_big_state_program(checkpoints, retained), printed_again, "big state again")
    wait_for(lambda: set(running_counts(printed_again.pairs())) == set(last), resumed)
    resumed.cancel()
    for key, values in running_counts(printed_again.pairs()).items():
        assert values[0] <= last[key] + 1 and values == list(range(values[0], values[0] + len(values))), key


def test_a_write_that_fails_leaves_no_temporary_file_and_keeps_the_previous_file(tmp_path) -> None:
    # Without a small file system to fill: a file size limit (RLIMIT_FSIZE) makes the write
    # fail with EFBIG, in a process of its own (it ignores SIGXFSZ, which would kill it).
    script = textwrap.dedent(
        f"""
        import resource, signal
        from flowmagic.runtime.continuous.storage import Storage
        storage = Storage({str(tmp_path / "storage")!r})
        storage.write("state/file.pkl", b"previous")
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            storage.write("state/file.pkl", b"x" * 100_000)
        except OSError as error:
            print(type(error).__name__, error)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=str(Path(__file__).parents[2])
    )
    assert result.returncode == 0, result.stderr
    written = tmp_path / "storage" / "state" / "file.pkl"
    assert result.stdout.strip() == f"StorageError File too large: {written}"
    assert written.read_bytes() == b"previous"
    assert sorted(path.name for path in written.parent.iterdir()) == ["file.pkl"]
