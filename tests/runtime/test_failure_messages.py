"""Failures inside a job name their culprit, in a message of bounded size (real local Spark)."""

from __future__ import annotations

import _thread
import sys
import threading
import time
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from test_magics import run

import flowmagic
from flowmagic import errors
from flowmagic.runtime.continuous.job import CollectedRecords, JobStatus


def _fail(function, executor: str = "spark") -> errors.JobFailedError:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.from_sequence(1, 10).map(function).name("culprit").print()
    with pytest.raises(errors.JobFailedError) as raised:
        env.execute(executor=executor)
    return raised.value


def exit_on_three(x):
    if x == 3:
        sys.exit(3)
    return x


def interrupt_on_three(x):
    if x == 3:
        raise KeyboardInterrupt
    return x


def huge_message_on_three(x):
    if x == 3:
        raise ValueError("x" * 5_000_000)
    return x


@pytest.mark.parametrize("executor", ["spark", "local"])
def test_system_exit_in_a_user_function_names_the_operator_and_record(executor, spark) -> None:
    failure = _fail(exit_on_three, executor)
    message = str(failure)
    assert "Job failed: SystemExit: a user function called sys.exit(3)" in message
    assert "operator: culprit" in message and "record:   3" in message
    assert "in exit_on_three" in message and "sys.exit(3)" in message
    assert failure.failure["operator"] == "culprit"


@pytest.mark.parametrize("executor", ["spark", "local"])
def test_keyboard_interrupt_in_a_user_function_names_the_operator(executor, spark) -> None:
    message = str(_fail(interrupt_on_three, executor))
    assert "Job failed: KeyboardInterrupt: raised in a user function" in message
    assert "operator: culprit" in message and "record:   3" in message


def test_a_huge_exception_message_is_cut_with_a_note(spark) -> None:
    failure = _fail(huge_message_on_three)
    message = str(failure)
    assert len(message) < 10_000
    assert "ValueError: xxxx" in message and "operator: culprit" in message
    assert "[truncated: the message has 5,000,000 characters]" in message
    assert len(failure.failure["exception"]) < 3_000


@pytest.mark.parametrize("executor", ["spark", "local"])
@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("records", [[("a", 1), ("b", 2)], [("a", 1), ("a", 2)]], ids=["distinct", "same-key"])
def test_an_aggregation_of_a_missing_field_fails_on_the_first_record_naming_the_operator(
    records, mode, executor, spark
) -> None:
    # In BATCH the aggregation first runs before the exchange, in its producer's subtask.
    env = flowmagic.StreamExecutionEnvironment(parallelism=1).set_runtime_mode(mode)
    env.from_collection(records).key_by(lambda pair: pair[0]).sum(5).print()
    with pytest.raises(errors.JobFailedError) as raised:
        env.execute(executor=executor)
    message = str(raised.value)
    expected = 'InvalidFieldReferenceError: Tried to select 5. field on "tuple of 2 fields", which is an invalid index.'
    assert expected in message
    assert "operator: Keyed Aggregation" in message and "record:   ('a', 1)" in message


def test_an_aggregation_of_a_field_of_scalars_uses_flinks_basic_type_message(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.from_collection([1, 2]).key_by(lambda x: x).max(1).print()
    with pytest.raises(errors.JobFailedError, match=r"The 1\. field selected on a basic type \(int\)"):
        env.execute()


def seventh_field(pair):
    return pair[7]


def as_list(pair):
    return [pair[0]]


@pytest.mark.parametrize("executor", ["spark", "local"])
@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize(
    ("key_selector", "expected"),
    [
        (seventh_field, "IndexError: tuple index out of range"),
        (as_list, "KeyRoutingError: This type (list) cannot be used as key"),
    ],
    ids=["raises", "list-key"],
)
def test_a_failing_key_selector_names_the_key_by_and_its_line(key_selector, expected, mode, executor, spark) -> None:
    # In BATCH the keys are first selected by the aggregation's pre-aggregation, before the exchange.
    env = flowmagic.StreamExecutionEnvironment(parallelism=2).set_runtime_mode(mode)
    pairs = env.from_collection([("a", 1), ("b", 2)])
    line = sys._getframe().f_lineno + 1
    pairs.key_by(key_selector).sum(1).print()
    with pytest.raises(errors.JobFailedError) as raised:
        env.execute(executor=executor)
    message = str(raised.value)
    assert f"Job failed: {expected}" in message
    assert raised.value.failure["operator"] == f"key_by() at {__file__}:{line}"
    assert "subtask:  Source: Collection Source (1/1)" in message and "record:   ('a', 1)" in message
    if key_selector is seventh_field:
        assert "in seventh_field" in message and "return pair[7]" in message


@pytest.mark.parametrize("executor", ["spark", "local"])
def test_a_failing_custom_partitioner_names_the_partition_custom_and_its_line(executor, spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    line = sys._getframe().f_lineno + 1
    env.from_collection([1, 2]).partition_custom(lambda key, count: count, lambda x: x).print()
    with pytest.raises(errors.JobFailedError) as raised:
        env.execute(executor=executor)
    assert "ValueError: custom partitioner returned 2, not a channel in [0, 2)" in str(raised.value)
    assert raised.value.failure["operator"] == f"partition_custom() at {__file__}:{line}"


@pytest.mark.parametrize("executor", ["spark", "local"])
@pytest.mark.parametrize("captured", ["lock", "file"])
def test_a_function_that_cannot_be_pickled_fails_when_the_job_is_built_naming_operator_line_and_object(
    captured, executor, spark, tmp_path, capfd
) -> None:
    held = threading.Lock() if captured == "lock" else open(tmp_path / "out.txt", "w")  # noqa: SIM115
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    line = sys._getframe().f_lineno + 1
    env.from_collection([1, 2]).map(lambda x: (held, x)[1]).name("holding").print()
    with pytest.raises(errors.NotSerializableError) as raised:
        env.execute(executor=executor)
    message = str(raised.value)
    assert message.startswith("The implementation of the function of 'holding' is not serializable.")
    assert "closure variable 'held' of " in message
    assert ("<unlocked _thread.lock object" if captured == "lock" else "<_io.TextIOWrapper name=") in message
    assert f"File \"{__file__}\", line {line}, where operator 'holding' was created" in message
    assert "map(lambda x: (held, x)[1])" in message
    # Not PySpark's own report of what it could not pickle.
    assert "Could not serialize" not in capfd.readouterr().err
    if captured == "file":
        held.close()


@pytest.mark.parametrize("executor", ["spark", "local"])
@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_a_key_selector_that_cannot_be_pickled_names_its_key_by_and_line(mode, executor, spark) -> None:
    # The reduce holds the key selector too, and in BATCH runs before the exchange as well.
    lock = threading.Lock()
    env = flowmagic.StreamExecutionEnvironment(parallelism=2).set_runtime_mode(mode)
    line = sys._getframe().f_lineno + 1
    env.from_collection([1, 2]).key_by(lambda x: (lock, x)[1]).reduce(lambda a, b: a + b).print()
    with pytest.raises(errors.NotSerializableError) as raised:
        env.execute(executor=executor)
    message = str(raised.value)
    assert message.startswith("The implementation of the key selector of key_by() is not serializable.")
    assert "closure variable 'lock' of " in message
    assert f'File "{__file__}", line {line}, where key_by() was called' in message


@pytest.mark.parametrize("executor", ["spark", "local"])
def test_a_record_that_cannot_be_pickled_fails_at_the_exchange_naming_operator_line_and_object(executor, spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    line = sys._getframe().f_lineno + 1
    generating = env.from_collection([1, 2]).map(lambda x: (x, (i for i in range(x)))).name("generating")
    generating.rebalance().map(lambda pair: pair[0]).print()
    with pytest.raises(errors.JobFailedError) as raised:
        env.execute(executor=executor)
    message = str(raised.value)
    assert "Job failed: TypeError: cannot pickle 'generator' object" in message
    # Either subtask may fail first, each on its own record.
    assert "operator: generating" in message and raised.value.failure["record"].startswith(("(1, <gen", "(2, <gen"))
    assert f"File \"{__file__}\", line {line}, where operator 'generating' was created" in message
    assert "Records crossing an exchange are pickled: the record[1] is <generator object" in message
    assert raised.value.failure["operator"] == "generating"


def slow_once_started(x: int, flag: str) -> int:
    Path(flag).touch()
    time.sleep(0.05)
    return x


def _interrupt_once(flag: Path) -> None:
    deadline = time.monotonic() + 60
    while not flag.exists():
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)
    _thread.interrupt_main()


@pytest.mark.parametrize("executor", ["spark", "local"])
def test_interrupting_execute_and_collect_in_a_notebook_shows_the_one_line_cancellation(
    executor, spark, tmp_path
) -> None:
    shell = InteractiveShell.instance()
    flag = tmp_path / "started"
    shell.user_ns.update(flowmagic=flowmagic, slow_once_started=slow_once_started, flag=str(flag))
    interrupter = threading.Thread(target=_interrupt_once, args=(flag,))
    interrupter.start()
    ran = run(
        shell,
        "env = flowmagic.StreamExecutionEnvironment(parallelism=1)\n"
        "stream = env.from_sequence(1, 60).map(lambda x: slow_once_started(x, flag))\n"
        f"list(stream.execute_and_collect(executor={executor!r}))",
    )
    interrupter.join()
    assert isinstance(ran.error, errors.JobCancelledError)
    assert ran.out.strip() == "JobCancelledError: Job 'Flink Streaming Job' was cancelled."


class _RunningJob:
    """What CollectedRecords reads of an unbounded job that emits nothing."""

    def __init__(self) -> None:
        self.status = JobStatus.RUNNING
        self.graph = type("Graph", (), {"job_name": "endless"})()
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        self.status = JobStatus.CANCELED


def test_interrupting_the_records_of_an_unbounded_job_cancels_it_with_the_one_line_message(tmp_path) -> None:
    job = _RunningJob()
    records = CollectedRecords(node_id=1)
    records.attach(job)  # type: ignore[arg-type]
    flag = tmp_path / "reading"
    interrupter = threading.Thread(target=_interrupt_once, args=(flag,))
    interrupter.start()
    flag.touch()
    with pytest.raises(errors.JobCancelledError) as raised:
        next(records)
    interrupter.join()
    assert job.cancelled
    assert raised.value._render_traceback_() == ["JobCancelledError: Job 'endless' was cancelled."]


def test_an_unbounded_job_with_a_function_that_cannot_be_pickled_fails_to_start_naming_it(spark) -> None:
    lock = threading.Lock()
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    line = sys._getframe().f_lineno + 1
    env.from_datagen(rows_per_second=10).map(lambda x: (lock, x)[1]).name("holding").print()
    with pytest.raises(errors.NotSerializableError) as raised:
        env.execute_async()
    message = str(raised.value)
    assert message.startswith("The implementation of the function of 'holding' is not serializable.")
    assert f"File \"{__file__}\", line {line}, where operator 'holding' was created" in message


def test_a_worker_error_of_a_dotted_exception_class_is_named() -> None:
    from flowmagic.runtime.failures import failure_message

    spark_text = (
        "An exception was thrown from the Python worker:\nTraceback (most recent call last):\n"
        '  File "wire.py", line 76, in pickle_records\n'
        "_pickle.PicklingError: Can't pickle <class '__main__.Reading'>: attribute lookup Reading on __main__ failed"
    )
    message = failure_message(None, RuntimeError(spark_text), "Spark")
    assert message == (
        "The job failed in Spark: _pickle.PicklingError: Can't pickle <class '__main__.Reading'>: "
        "attribute lookup Reading on __main__ failed"
    )
