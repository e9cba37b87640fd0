"""A long-running continuous job keeps its checkpoint directory bounded: the line logs of its
socket and monitored file sources keep only the lines an epoch may still read, and the epochs'
logged times only those of epochs a replay may still run; nothing is lost or read twice across
a killed driver and a job restored from its retained checkpoint. Real Spark, real sockets on
127.0.0.1, a real SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from continuous_support import Printed, start, wait_for

import flowmagic
from flowmagic.common import Duration, WatermarkStrategy
from flowmagic.datastream.connectors import FileSource, StreamFormat
from flowmagic.runtime.continuous.checkpoints import _KEPT_EPOCHS
from flowmagic.runtime.continuous.job import JobStatus
from flowmagic.runtime.continuous.sources import _LINES_PER_SEGMENT
from flowmagic.vocabulary.bucket_assigner import BucketAssigner
from flowmagic.vocabulary.configuration import Configuration
from flowmagic.vocabulary.rolling_policy import RollingPolicy
from flowmagic.vocabulary.sinks import Encoder, FileSink

pytestmark = pytest.mark.e2e


class ReconnectableServer:
    """A TCP server on 127.0.0.1 that accepts one client after another and sends lines to the
    newest; ``close_client`` ends the newest connection (the end of the socket's stream)."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.clients: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _address = self.server.accept()
            except OSError:
                return
            self.clients.append(client)

    def send(self, connection: int, lines: range) -> None:
        deadline = time.time() + 120
        while len(self.clients) <= connection:
            assert time.time() < deadline, "the job never connected"
            time.sleep(0.05)
        self.clients[connection].sendall("".join(f"{line}\n" for line in lines).encode())

    def close_client(self) -> None:
        self.clients[-1].close()

    def close(self) -> None:
        for client in self.clients:
            client.close()
        self.server.close()


def _slowly(line: str) -> str:
    time.sleep(0.00005)  # so that the driver is killed while logged lines wait for epochs
    return line


def _socket_to_files(
    port: int, output: str, checkpoints: str, restore: str | None = None
) -> flowmagic.StreamExecutionEnvironment:
    configuration = Configuration()
    if restore is not None:
        configuration.set_string("execution.savepoint.path", restore)
    env = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    env.set_parallelism(2)
    env.enable_checkpointing(300)
    env.get_checkpoint_config().set_checkpoint_storage(f"file://{checkpoints}")
    sink = (
        FileSink.for_row_format(output, Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
        .build()
    )
    env.socket_text_stream("127.0.0.1", port).map(_slowly).sink_to(sink)
    return env


# A driver of the program above, in a process of its own to be killed (the tests' directory is
# on its PYTHONPATH, as on the Spark workers').
_KILLED_DRIVER = """
import sys, time
from pyspark.sql import SparkSession
from flowmagic import compile as passes
from flowmagic.runtime import start_continuous
from test_continuous_disk import _socket_to_files

port, output, checkpoints = int(sys.argv[1]), sys.argv[2], sys.argv[3]
spark = (SparkSession.builder.master("local[2,4]").config("spark.ui.enabled", "false")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
env = _socket_to_files(port, output, checkpoints)
start_continuous(passes.build(env.get_stream_graph("killed")).execution_graph, options=env.continuous_options())
time.sleep(600)  # until the test kills this driver
"""


def _committed(output: Path) -> list[int]:
    lines = []
    for path in output.iterdir():
        if not path.name.startswith("."):
            lines.extend(int(line) for line in path.read_text().splitlines())
    return lines


def _files_and_bytes(directory: Path, prefix: str = "") -> tuple[int, int]:
    files = [path for path in directory.iterdir() if path.name.startswith(prefix)] if directory.exists() else []
    return len(files), sum(path.stat().st_size for path in files)


def test_a_socket_job_keeps_its_log_and_epoch_times_bounded_and_loses_nothing_across_a_killed_driver(
    spark, tmp_path
) -> None:
    from flowmagic import compile as passes
    from flowmagic.runtime import start_continuous

    output, checkpoints = tmp_path / "out", tmp_path / "checkpoints"
    server = ReconnectableServer()
    first, total = 200_000, 300_000
    driver = subprocess.Popen(
        [sys.executable, "-c", _KILLED_DRIVER, str(server.port), str(output), str(checkpoints)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        start_new_session=True,  # its JVM and Python workers die with it
    )
    try:
        server.send(0, range(first))
        # Killed once every line is in the log, a checkpoint completed since (the lines it had
        # not processed are in it: a socket's lines after the last checkpoint are lost with
        # the driver, as in Flink) and some lines are committed, not all.
        deadline = time.time() + 300
        while not (
            (logged := [int(path.read_text() or 0) for path in checkpoints.glob("*/sources/*/count")]) == [first]
            and output.exists()
            and _committed(output)
        ):
            assert driver.poll() is None and time.time() < deadline, (driver.poll(), logged)
            time.sleep(0.05)
        before = {path.name for path in checkpoints.glob("*/chk-*")}
        while not {path.name for path in checkpoints.glob("*/chk-*")} - before:
            assert driver.poll() is None and time.time() < deadline, driver.poll()
            time.sleep(0.05)
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(60)
        assert len(_committed(output)) < first, "the driver ended its work before the kill"

        # A new driver restores the killed one's last checkpoint, Flink's way.
        (retained,) = checkpoints.glob("*/chk-*")
        env = _socket_to_files(server.port, str(output), str(checkpoints), str(retained))
        graph = passes.build(env.get_stream_graph("resumed")).execution_graph
        job = start_continuous(graph, options=env.continuous_options())
        server.send(1, range(first, total))
        wait_for(lambda: len(_committed(output)) >= total, job, timeout=600)
        # Idle epochs roll the kept manifests past every line read.
        epochs = job.epochs
        wait_for(lambda: job.epochs >= epochs + _KEPT_EPOCHS + 1, job)
        log = next((checkpoints / job.get_job_id()).glob("sources/*/count")).parent
        segments, log_bytes = _files_and_bytes(log, "segment-")
        epoch_times, _ = _files_and_bytes(checkpoints / job.get_job_id() / "epochs")
        sent_bytes = sum(len(f"{line}\n") for line in range(total))
        assert job.checkpoints.completed >= 3
        server.close_client()
        assert job.wait(300) is JobStatus.FINISHED
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
        server.close()
    print(f"log: {segments} segment(s), {log_bytes} bytes of {sent_bytes} sent; {epoch_times} epoch time file(s)")
    # At most the segment the next line goes to; at most the time of the epoch running now.
    assert segments <= 1 and log_bytes <= _LINES_PER_SEGMENT * len(json.dumps(str(total)) + "\n")
    assert epoch_times <= 1
    # Every line committed exactly once, across the kill and the restore.
    committed = _committed(output)
    assert len(committed) == total and sorted(committed) == list(range(total))


def test_a_monitored_file_sources_log_is_bounded_and_a_restored_job_reads_new_files_once(spark, tmp_path) -> None:
    inbox, checkpoints = tmp_path / "inbox", tmp_path / "checkpoints"
    inbox.mkdir()
    per_file = _LINES_PER_SEGMENT + 5_000  # each file's lines end past a segment's end

    def drop(name: str, lines: range) -> None:
        # Written beside the directory and moved in, as Flink's docs advise for monitored paths.
        staging = tmp_path / f".{name}"
        staging.write_text("".join(f"{line}\n" for line in lines))
        os.replace(staging, inbox / name)

    def run(printed: Printed, restore: Path | None = None):
        configuration = Configuration()
        if restore is not None:
            configuration.set_string("execution.savepoint.path", str(restore))
        configuration.set_string("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
        env = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
        env.set_parallelism(1)
        env.enable_checkpointing(200)
        env.get_checkpoint_config().set_checkpoint_storage(f"file://{checkpoints}")
        text = StreamFormat.text_line_format()
        source = FileSource.for_record_stream_format(text, str(inbox)).monitor_continuously(Duration.of_millis(200))
        env.from_source(source.build(), WatermarkStrategy.no_watermarks(), "inbox").print()
        return start(env, printed, "inbox")

    drop("1.txt", range(per_file))
    drop("2.txt", range(per_file, 2 * per_file))
    printed = Printed()
    job = run(printed)
    wait_for(lambda: len(printed.lines) >= 2 * per_file, job)
    epochs = job.epochs
    wait_for(lambda: job.epochs >= epochs + _KEPT_EPOCHS + 1, job)
    log = next((checkpoints / job.get_job_id()).glob("sources/*/count")).parent
    segments = sorted(path.name for path in log.iterdir() if path.name.startswith("segment-"))
    job.cancel()
    # Two files' lines filled two segments and part of a third: only the third is kept.
    assert segments == ["segment-00000002.jsonl"]

    drop("3.txt", range(2 * per_file, 3 * per_file))
    (retained,) = (checkpoints / job.get_job_id()).glob("chk-*")
    printed_again = Printed()
    resumed = run(printed_again, retained)
    wait_for(lambda: len(printed_again.lines) >= per_file, resumed)
    # A file dropped later is logged after anything the restored job's first listing took:
    # once its line is printed, a file read again would have been printed too.
    drop("4.txt", range(3 * per_file, 3 * per_file + 1))
    wait_for(lambda: str(3 * per_file) in printed_again.lines, resumed)
    resumed.cancel()
    assert [int(line) for line in printed.lines] == list(range(2 * per_file))
    assert [int(line) for line in printed_again.lines] == list(range(2 * per_file, 3 * per_file + 1))
