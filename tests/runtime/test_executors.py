"""One way to run a job: every way of running submits to an executor and gets a job client."""

from __future__ import annotations

import threading
import time

import pytest

import flowmagic
from flowmagic import errors, executors


def _slow_program(records: int = 100_000) -> flowmagic.StreamExecutionEnvironment:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.from_sequence(1, records).map(lambda x: time.sleep(0.001) or x).print()
    return env


def test_a_bounded_job_on_the_local_executor_has_a_client_that_follows_it_to_the_end() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.from_collection(["a", "b"]).map(str.upper).print()
    client = executors.submit(env.get_stream_graph("upper"), executor="local")
    assert str(client.wait(60)) == "FINISHED"
    assert str(client.get_job_status()) == "FINISHED"
    assert [line for _, line in client.result().printed] == ["A", "B"]
    with pytest.raises(errors.JobError, match="'upper' is bounded: savepoints are taken of unbounded jobs"):
        client.trigger_savepoint("/tmp/nowhere")


def test_execute_async_of_a_bounded_program_returns_its_client_as_flinks() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.from_sequence(1, 3).map(lambda x: x * 10).print()
    client = env.execute_async("tens", executor="local")
    result = client.result()
    assert result.state == "FINISHED"
    assert sorted(line for _, line in result.printed) == ["10", "20", "30"]


def test_cancelling_the_client_of_a_bounded_job_ends_it_canceled() -> None:
    client = executors.submit(_slow_program().get_stream_graph("slow"), executor="local")
    deadline = time.monotonic() + 60
    while str(client.get_job_status()) != "RUNNING" and time.monotonic() < deadline:
        client.wait(0.05)
    client.cancel()
    assert str(client.get_job_status()) == "CANCELED"
    with pytest.raises(errors.JobCancelledError, match="'slow' was cancelled"):
        client.result()


def test_an_attached_run_cancelled_by_its_event_is_cancelled_and_shows_its_end() -> None:
    cancel = threading.Event()
    states = []

    def progress(monitor) -> None:
        states.append(str(monitor.state))
        cancel.set()

    with pytest.raises(errors.JobCancelledError):
        executors.execute(
            _slow_program().get_stream_graph(), executor="local", on_progress=progress, cancel_event=cancel
        )
    assert states[-1] == "CANCELED"


def test_boundedness_is_read_from_the_graph_and_chooses_the_continuous_executor() -> None:
    bounded = flowmagic.StreamExecutionEnvironment(parallelism=1)
    bounded.from_sequence(1, 3).print()
    unbounded = flowmagic.StreamExecutionEnvironment(parallelism=1)
    unbounded.from_datagen(rows_per_second=1).print()
    assert not executors.is_unbounded(bounded.get_stream_graph())
    assert executors.is_unbounded(unbounded.get_stream_graph())
    assert executors.is_unbounded(unbounded.get_execution_graph())
    assert executors.executor("continuous").name == "continuous"
    with pytest.raises(errors.UnsupportedSourceError, match="runs in the continuous mode, on Spark only"):
        executors.submit(unbounded.get_stream_graph("endless"), executor="local")
    with pytest.raises(errors.ProgramError, match="Unknown executor 'flink': use one of spark, local"):
        executors.submit(bounded.get_stream_graph(), executor="flink")
