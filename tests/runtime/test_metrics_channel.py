"""The live metrics channel on real sockets: what a stray, slow or hostile client can do to
the driver (nothing visible), and what an unreachable driver does to a job (no delay)."""

from __future__ import annotations

import json
import os
import socket
import threading
import time

import pytest

import flowmagic
from flowmagic.runtime import execute
from flowmagic.runtime.metrics import JobMonitor
from flowmagic.runtime.metrics_channel import MAX_PENDING, MetricsServer, Reporter
from flowmagic.runtime.spark import executor as spark_executor
from flowmagic.runtime.task import SubtaskStats
from flowmagic.widgets.job_view import JobView


def _monitor() -> JobMonitor:
    monitor = JobMonitor("job")
    monitor.add_vertex("v", "Map", 2)
    return monitor


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _closed_by_server(client: socket.socket) -> bool:
    client.settimeout(5)
    try:
        return client.recv(1) == b""
    except ConnectionResetError:
        # Closing a socket with unread input resets the connection instead.
        return True


def _report(server: MetricsServer, records: int) -> socket.socket:
    client = socket.create_connection(server.address, timeout=5)
    hello = json.dumps({"secret": server.secret}).encode() + b"\n"
    report = json.dumps({"vertex": "v", "subtask": 0, "state": "RUNNING", "in": records}).encode() + b"\n"
    client.sendall(hello + report)
    return client


def _wait_for(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_half_open_connections_hold_no_thread_are_timed_out_and_closed_with_the_server() -> None:
    fds, threads = _open_fds(), threading.active_count()
    monitor = _monitor()
    server = MetricsServer("127.0.0.1", monitor, hello_timeout=0.5)
    clients = []
    for _ in range(1000):
        client = socket.create_connection(server.address, timeout=5)
        client.sendall(b'{"secr')
        clients.append(client)
    # The server's single thread (a little slack for threads the Spark session may start).
    assert threading.active_count() - threads <= 3
    assert _wait_for(lambda: server.open_connections <= MAX_PENDING)
    # An executor still gets through the flood.
    executor = _report(server, 42)
    assert _wait_for(lambda: monitor.vertices["v"][0].records_in == 42)
    assert all(_closed_by_server(client) for client in clients)
    assert server.dropped["evicted"] + server.dropped["hello timeout"] == 1000
    server.close()
    assert _closed_by_server(executor)
    # Only the clients' own sockets are left open.
    assert _open_fds() - fds <= len(clients) + 1 + 3
    for client in [*clients, executor]:
        client.close()
    assert _wait_for(lambda: threading.active_count() <= threads)


def test_clients_without_the_secret_cannot_print_into_the_notebook(capfd) -> None:
    monitor = _monitor()
    server = MetricsServer("127.0.0.1", monitor)
    hellos = [
        json.dumps({"secret": "é" * 48}, ensure_ascii=False).encode(),
        b"[" * 4000,
        b"\xff\xfe\x00",
        b"[]",
        b'{"secret": 5}',
        json.dumps({"secret": "0" * 48}).encode(),
    ]
    for hello in hellos:
        with socket.create_connection(server.address, timeout=5) as client:
            client.sendall(hello + b"\n" + b'{"vertex": "v", "subtask": 0, "in": 7}\n')
            assert _closed_by_server(client)
    # An executor's malformed reports are dropped too, and the channel carries on.
    executor = _report(server, 1)
    executor.sendall(b'{"vertex": "v", "subtask": 0, "in": "many"}\n' + b"[" * 100_000 + b"\n")
    executor.sendall(b'{"vertex": "v", "subtask": 0, "in": 3}\n')
    assert _wait_for(lambda: monitor.vertices["v"][0].records_in == 3)
    server.close()
    executor.close()
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert server.dropped["bad hello"] == len(hellos)
    assert server.dropped["bad report"] == 2


def test_an_oversized_line_is_cut_while_it_arrives() -> None:
    monitor = _monitor()
    server = MetricsServer("127.0.0.1", monitor)
    client = _report(server, 5)
    chunk = b" " * (1 << 20)
    sent = 0
    with pytest.raises(OSError):
        # Without a newline, for 256 MB: the server must hang up long before that.
        for _ in range(256):
            client.sendall(chunk)
            sent += len(chunk)
    assert sent < 64 << 20
    assert _wait_for(lambda: server.dropped["line too long"] == 1)
    assert monitor.vertices["v"][0].records_in == 5
    client.close()
    server.close()


def _unreachable_address() -> tuple[socket.socket, list[socket.socket]]:
    """A listener whose accept queue is full: connecting to it hangs, as to a firewalled host."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    filler = socket.create_connection(listener.getsockname(), timeout=1)
    return listener, [filler]


def test_an_unreachable_driver_delays_no_subtask() -> None:
    listener, fillers = _unreachable_address()
    try:
        began = time.perf_counter()
        reporter = Reporter(listener.getsockname(), "secret", "v", 0, 0, SubtaskStats())
        reporter.finish("FINISHED")
        assert time.perf_counter() - began < 0.2
    finally:
        for sock in [listener, *fillers]:
            sock.close()


class _UnreachableServer(MetricsServer):
    """A real metrics server, but the executors are told an address they cannot reach."""

    unreachable: tuple[str, int]

    def __init__(self, host: str, monitor: JobMonitor):
        super().__init__(host, monitor)
        self.address = self.unreachable


def _timed(graph) -> tuple[float, object]:
    began = time.perf_counter()
    result = execute(graph, echo=False)
    return time.perf_counter() - began, result


def test_a_job_whose_executors_cannot_reach_the_driver_runs_at_full_speed_and_says_so(monkeypatch, spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=8)
    env.from_sequence(1, 80).map(lambda x: x * 2).print()
    graph = env.get_execution_graph()
    _timed(graph)  # starts the Python workers
    reachable, fine = _timed(graph)
    for ran in (fine, execute(graph, executor="local", echo=False)):
        shown = JobView(graph.job_graph)
        shown.update(ran.metrics)
        assert shown.summary() == "<Job 'Flink Streaming Job': FINISHED, 8/8 subtasks finished>"
    listener, fillers = _unreachable_address()
    monkeypatch.setattr(_UnreachableServer, "unreachable", listener.getsockname(), raising=False)
    monkeypatch.setattr(spark_executor, "MetricsServer", _UnreachableServer)
    try:
        unreachable, result = _timed(graph)
    finally:
        for sock in [listener, *fillers]:
            sock.close()
    assert len(result.printed) == 80
    # Eight subtasks on two cores each waiting 2 s to connect took 8 s more; the driver waits
    # 1 s for last reports that never come.
    assert unreachable < reachable + 4
    assert result.metrics.reported_subtasks == 0
    view = JobView(graph.job_graph)
    view.update(result.metrics)
    assert "live metrics unavailable: no report of any subtask reached the notebook" in view.summary()
    assert "Live metrics unavailable" in view.to_html()
    assert "&ndash;" in view.to_html()


def test_a_finished_job_waits_for_a_retried_subtasks_late_reports_not_for_silence() -> None:
    from flowmagic.runtime.metric_reports import SubtaskUpdate

    monitor = _monitor()
    monitor.update(SubtaskUpdate("v", 0, 0, state="FINISHED"))
    monitor.update(SubtaskUpdate("v", 1, 0, state="FAILED"))

    def retried_attempt_reports_late() -> None:
        time.sleep(0.4)
        monitor.update(SubtaskUpdate("v", 1, 1, state="RUNNING"))
        time.sleep(0.4)
        monitor.update(SubtaskUpdate("v", 1, 1, state="FINISHED"))

    late = threading.Thread(target=retried_attempt_reports_late)
    late.start()
    monitor.wait_for_reports(quiet=30.0, timeout=60.0)
    late.join()
    subtask = monitor.vertices["v"][1]
    assert (subtask.attempt, subtask.state) == (1, "FINISHED")

    silent = _monitor()
    started = time.monotonic()
    silent.wait_for_reports(quiet=0.3, timeout=60.0)
    assert time.monotonic() - started < 30
