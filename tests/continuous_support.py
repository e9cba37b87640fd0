"""What the continuous-mode tests share: waiting on a job, its printed output, a line server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

import flowmagic


def wait_for(condition: Callable[[], bool], job=None, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while not condition():
        if job is not None and job.get_job_status().is_globally_terminal:
            job.wait()
            raise AssertionError(f"the job ended: {job}")
        if time.time() > deadline:
            seen = job.monitor.snapshot()["vertices"] if job is not None else None
            raise AssertionError(f"timed out waiting for {job}: {seen}")
        time.sleep(0.1)


class Printed:
    """Collects what a job's print sinks print (``(subtask, record text)``)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()

    def take(self, output) -> None:
        with self._lock:
            self.lines.extend(line for _err, line in output.printed)

    def pairs(self) -> list[tuple[str, int]]:
        with self._lock:
            lines = list(self.lines)
        result = []
        for line in lines:
            key, value = line.split("> ", 1)[-1].strip("()").split(",")
            result.append((key, int(value)))
        return result


def start(env: flowmagic.StreamExecutionEnvironment, printed: Printed, name: str = "job"):
    from flowmagic import compile as passes
    from flowmagic.runtime import start_continuous

    graph = passes.build(env.get_stream_graph(name)).execution_graph
    return start_continuous(graph, options=env.continuous_options(), on_output=printed.take)


def running_counts(pairs: list[tuple[str, int]]) -> dict[str, list[int]]:
    counts: dict[str, list[int]] = {}
    for key, value in pairs:
        counts.setdefault(key, []).append(value)
    return counts


class LineServer:
    """A TCP server on 127.0.0.1 that sends the lines it is given to one client."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.client: socket.socket | None = None
        self.connected = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.client, _address = self.server.accept()
        self.connected.set()

    def send(self, *lines: str) -> None:
        assert self.connected.wait(60), "the job never connected"
        assert self.client is not None
        self.client.sendall("".join(f"{line}\n" for line in lines).encode())

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        self.server.close()
