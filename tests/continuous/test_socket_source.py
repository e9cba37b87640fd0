"""The socket source at the ends of its connections, as Flink's ``SocketTextStreamFunction``:
the text after the last delimiter is a line when the stream ends, reconnections share one
buffer and stop after ``max_retry`` connections, and a connection that fails (reset, refused)
fails the job, after the lines read before it were processed. Real servers on 127.0.0.1."""

from __future__ import annotations

import fcntl
import socket
import struct
import termios
import threading
import time

import pytest
from continuous_support import Printed, start, wait_for

import flowmagic
from flowmagic import errors
from flowmagic.runtime.continuous.job import JobStatus

pytestmark = pytest.mark.e2e


def _unacknowledged(sock: socket.socket) -> int:
    """The bytes of ``sock``'s send queue its peer has not acknowledged (Linux's SIOCOUTQ)."""
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0]


class ScriptedServer:
    """Serves one script per connection, in order: each sends its bytes, waits for its events
    (set by the test), then ends the connection: closes it, or resets it if the script ends
    with ``"reset"`` (SO_LINGER 0 makes close send an RST)."""

    def __init__(self, *scripts: list[bytes | threading.Event | str]):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.scripts = list(scripts)
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        for script in self.scripts:
            client, _address = self.server.accept()
            self.accepted += 1
            for step in script:
                if isinstance(step, bytes):
                    client.sendall(step)
                elif isinstance(step, threading.Event):
                    step.wait(120)
                elif step == "reset":
                    # An RST drops what the peer has not acknowledged: wait until it has all.
                    deadline = time.time() + 60
                    while _unacknowledged(client) and time.time() < deadline:
                        time.sleep(0.01)
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()

    def close(self) -> None:
        self.server.close()


def _texts(printed: Printed) -> list[str]:
    # Parallelism 1: Flink prints the records without a subtask prefix.
    return list(printed.lines)


def _job(port: int, max_retry: int = 0):
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.socket_text_stream("127.0.0.1", port, max_retry=max_retry).print()
    printed = Printed()
    return start(env, printed, "socket"), printed


def test_the_text_after_the_last_newline_is_a_line_when_the_server_closes(spark) -> None:
    server = ScriptedServer([b"a\nb"])
    job, printed = _job(server.port)
    try:
        assert job.wait(120) is JobStatus.FINISHED
    finally:
        server.close()
    assert _texts(printed) == ["a", "b"]


def test_reconnections_share_one_buffer_and_end_after_max_retry_connections(spark) -> None:
    # Flink counts the connections that ended: max_retry=2 reads two, and the line cut by the
    # first close goes on in the second connection.
    server = ScriptedServer([b"x\r\ny\nhel"], [b"lo\nz"], [b"never read\n"])
    job, printed = _job(server.port, max_retry=2)
    try:
        assert job.wait(120) is JobStatus.FINISHED
    finally:
        server.close()
    assert _texts(printed) == ["x", "y", "hello", "z"]
    assert server.accepted == 2


def test_a_reset_connection_fails_the_job_after_the_lines_read_before_it(spark) -> None:
    lines = [f"line {index}" for index in range(2000)]
    first_read = threading.Event()
    server = ScriptedServer(
        [b"first\n", first_read, "".join(f"{line}\n" for line in lines).encode() + b"cut off", "reset"]
    )
    job, printed = _job(server.port)
    try:
        wait_for(lambda: "first" in printed.lines, job)
        first_read.set()
        with pytest.raises(
            errors.JobFailedError, match=rf"Socket source 127\.0\.0\.1:{server.port}: ConnectionResetError"
        ):
            job.wait(120)
    finally:
        first_read.set()
        server.close()
    assert job.get_job_status() is JobStatus.FAILED
    # Every line before the reset, once; the text after the last newline is dropped, as by
    # Flink's source, which fails without emitting it.
    assert _texts(printed) == ["first", *lines]
    assert server.accepted == 1


def test_a_refused_connection_fails_the_job_whatever_max_retry_says(spark) -> None:
    # Flink's source retries only connections the server closed: a connection that cannot be
    # made fails its task (and the job, unless a restart strategy restarts it).
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    job, _printed = _job(port, max_retry=-1)
    with pytest.raises(errors.JobFailedError, match=rf"Socket source 127\.0\.0\.1:{port}: ConnectionRefusedError"):
        job.wait(120)
