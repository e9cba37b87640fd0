"""``%flow run`` / ``%flow cancel`` through a real IPython shell on a real local Spark session."""

from __future__ import annotations

import re
import threading
import time

import pytest
from IPython.core.interactiveshell import InteractiveShell
from test_magics import WORDCOUNT, magics, run

import flowmagic


@pytest.fixture
def shell(spark) -> InteractiveShell:
    ipython = InteractiveShell.instance()
    ipython.run_line_magic("load_ext", "flowmagic")
    ipython.reset(new_session=False)
    magics(ipython).pipelines.clear()
    return ipython


def test_run_shows_live_metrics_then_flinks_print_output(shell) -> None:
    assert run(shell, f"%%flow wordcount --parallelism 2 --show none\n{WORDCOUNT}").success
    ran = run(shell, "%flow run wordcount")
    assert ran.success, ran.out
    words = ["to", "be", "or", "not", "to", "be", "that", "is", "the", "question"]
    seen: dict[str, int] = {}
    expected = []
    for word in words:
        seen[word] = seen.get(word, 0) + 1
        # The print sink's subtask is the one Flink's key routing sends the word to.
        expected.append(f"{flowmagic.assign_key_to_parallel_operator(word, 128, 2) + 1}> ({word},{seen[word]})")
    assert sorted(ran.captured.stdout.splitlines()) == sorted(expected)
    views = [data for data in ran.displayed if "text/html" in data and "flowmagic-job" in data["text/html"]]
    final = views[-1]
    assert final["text/plain"] == "<Job 'wordcount': FINISHED, 5/5 subtasks finished>"
    html = final["text/html"]
    assert '<img src="data:image/svg+xml;base64,' in html and "<svg" not in html
    assert "Keyed Aggregation -&gt; Sink: Print to Std. Out (2/2)" in html
    assert "Records in" in html and "FINISHED" in html
    # Subtasks of milliseconds have no meaningful rate.
    assert re.findall(r"<td class='n'>([^<]*)</td></tr>", html).count("-") == 5


def test_records_per_second_of_running_subtasks(shell) -> None:
    cell = "%%flow paced --parallelism 1 --show none\n"
    cell += "env.from_datagen(lambda i: i, count=1200, rows_per_second=300).map(lambda x: x).print()\n"
    assert run(shell, cell).success
    ran = run(shell, "%flow run paced")
    assert ran.success, ran.out
    rates = []
    for data in ran.displayed:
        row = re.search(
            r"<tr><td>Source: [^<]*\(1/1\)</td><td>.*?>RUNNING<.*?<td class='n'>([^<]*)</td></tr>", data["text/html"]
        )
        if row is not None:
            rates.append(row.group(1))
    # "-" until a second of counters is seen, then about 300 records/s while it runs.
    assert rates[0] == "-"
    measured = [float(rate.replace(",", "")) for rate in rates if rate != "-"]
    assert measured and all(150 < rate < 450 for rate in measured), rates


def test_run_overrides_parallelism_and_mode_and_takes_a_session_variable(shell, spark) -> None:
    shell.user_ns["my_spark"] = spark
    assert run(shell, f"%%flow wc --parallelism 2 --show none\n{WORDCOUNT}").success
    ran = run(shell, "%flow run wc --spark my_spark --parallelism 3 --mode batch")
    assert ran.success, ran.out
    assert sorted(line.split("> ")[1] for line in ran.captured.stdout.splitlines()) == sorted(
        ["(to,2)", "(be,2)", "(or,1)", "(not,1)", "(that,1)", "(is,1)", "(the,1)", "(question,1)"]
    )
    assert {line.split(">")[0] for line in ran.captured.stdout.splitlines()} <= {"1", "2", "3"}
    assert "<Job 'wc': FINISHED, 7/7 subtasks finished>" in [d.get("text/plain") for d in ran.displayed]


def test_a_failing_function_is_a_short_message_with_the_users_line(shell) -> None:
    cell = "%%flow broken --show none\ndef parse(x):\n    return int(x)\n"
    cell += "env.from_collection(['1', 'x']).map(parse).print()\n"
    assert run(shell, cell).success
    ran = run(shell, "%flow run broken")
    assert not ran.success
    message = str(ran.error)
    assert "ValueError: invalid literal for int()" in message and "operator: Map" in message
    assert "return int(x)" in message and "record:   'x'" in message
    assert "Traceback" not in ran.out.split("UsageError")[0]


def test_cancel_a_background_run(shell) -> None:
    # Threads other tests left (Spark's callback connections of finished streaming queries
    # among them) are not this test's: it checks that its own runs leave none.
    threads_before = threading.active_count()
    cell = "%%flow slow --show none\nimport time\n"
    cell += "env.from_sequence(1, 100000).map(lambda x: time.sleep(0.01) or x).print()\n"
    assert run(shell, cell).success
    assert run(shell, "%flow run slow --background").success
    assert run(shell, "%flow run slow --background").success
    pipeline = magics(shell).pipelines["slow"]
    deadline = time.time() + 60
    while pipeline.status() != "RUNNING (2 runs)" and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1)
    # Each background run has its own handle: both are cancelled, none left uncancellable.
    ran = run(shell, "%flow cancel slow")
    assert ran.success and "Cancelled 2 runs of 'slow'" in ran.out
    while pipeline.status().startswith("RUNNING") and time.time() < deadline:
        time.sleep(0.05)
    # %flow list says how the last run ended.
    assert pipeline.status() == "CANCELED" and "CANCELED" in formatted_list(shell)
    assert not run(shell, "%flow cancel slow").success
    while threading.active_count() > threads_before and time.time() < deadline:
        time.sleep(0.05)
    assert threading.active_count() <= threads_before


@pytest.mark.e2e
def test_an_unbounded_pipeline_runs_in_the_background_stops_with_a_savepoint_and_restores(
    shell, tmp_path, monkeypatch
) -> None:
    from flowmagic.runtime.continuous import output as continuous_output

    # Keep every printed line (a view keeps the newest few) to check the counts whole.
    monkeypatch.setattr(continuous_output, "PRINTED_TAIL", 1_000_000)
    cell = "%%flow counts --parallelism 2 --show none\n"
    cell += "env.from_datagen(lambda i: (f'k{i % 3}', 1), rows_per_second=200).key_by(lambda p: p[0]).sum(1)"
    cell += ".uid('counts').print()\n"
    assert run(shell, cell).success
    started = time.time()
    ran = run(shell, "%flow run counts")
    assert ran.success, ran.out
    assert time.time() - started < 60 and "runs in the background" in ran.out
    pipeline = magics(shell).pipelines["counts"]
    (job,) = pipeline.jobs
    deadline = time.time() + 120
    while job.printed_total < 30 and time.time() < deadline:
        time.sleep(0.2)
    assert "RUNNING" in formatted_list(shell)
    savepoint = tmp_path / "sp"
    stopped = run(shell, f"%flow stop counts --savepoint {savepoint}")
    assert stopped.success and f"Savepoint completed. Path: file:{savepoint}" in stopped.out
    assert job.get_job_status().name == "FINISHED"
    # %flow list shows how the job ended, and where its savepoint is.
    while "RUNNING" in formatted_list(shell) and time.time() < deadline:
        time.sleep(0.1)
    assert f"FINISHED (savepoint {savepoint})" in formatted_list(shell)
    last = {}
    for line in job.printed_tail:
        key, value = line.split("> ")[1].strip("()").split(",")
        last[key] = int(value)
    # The view the cell showed kept updating after the cell returned, up to the end.
    final_view = job.snapshot()
    assert final_view.continuous.status == "FINISHED"

    restored = run(shell, f"%flow run counts --from-savepoint {savepoint}")
    assert restored.success, restored.out
    (second,) = pipeline.jobs
    while second.printed_total < 3 and time.time() < deadline:
        time.sleep(0.2)
    assert run(shell, "%flow cancel counts").success
    newest = {}
    assert len(second.printed_tail) == second.printed_total
    for line in second.printed_tail:
        key, value = line.split("> ")[1].strip("()").split(",")
        newest[key] = int(value)
    # Each key counted on from its savepoint value: the restored job printed exactly the
    # difference (a job that started from zero would print far fewer than its counts).
    assert set(newest) == set(last) == {"k0", "k1", "k2"}
    assert sum(newest[key] - last[key] for key in newest) == second.printed_total


def formatted_list(shell: InteractiveShell) -> str:
    value = run(shell, "%flow list").value
    return repr(value)


NUMBERED = """
class Count(flowmagic.KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(flowmagic.ValueStateDescriptor('count', None))

    def process_element(self, value, ctx, out):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        out.collect((value[0], value[1], count))

numbers = env.from_datagen(lambda i: i, rows_per_second=200).uid('numbers')
numbers.{mapped}.key_by(lambda p: p[0]).process(Count()).uid('counts').print()
"""


def _rows(job) -> list[tuple[str, int, int]]:
    assert len(job.printed_tail) == job.printed_total
    rows = []
    for line in job.printed_tail:
        key, index, count = line.split("> ")[1].strip("()").split(",")
        rows.append((key.strip().strip("'"), int(index), int(count)))
    return rows


@pytest.mark.e2e
def test_a_pipeline_edited_and_run_from_its_savepoint_processes_every_record_once(shell, tmp_path, monkeypatch) -> None:
    from flowmagic.runtime.continuous import output as continuous_output

    monkeypatch.setattr(continuous_output, "PRINTED_TAIL", 1_000_000)
    cell = "%%flow numbered --parallelism 2 --show none\nimport flowmagic\n"
    assert run(shell, cell + NUMBERED.format(mapped="map(lambda i: (f'k{i % 3}', i))")).success
    assert run(shell, "%flow run numbered").success
    pipeline = magics(shell).pipelines["numbered"]
    (job,) = pipeline.jobs
    deadline = time.time() + 180
    while job.printed_total < 50 and time.time() < deadline:
        time.sleep(0.2)
    savepoint = tmp_path / "sp"
    assert run(shell, f"%flow stop numbered --savepoint {savepoint}").success
    before = _rows(job)

    # Edited: another map, the same uids; restored at parallelism 3.
    edited = NUMBERED.format(mapped="filter(lambda i: i >= 0).map(lambda i: (f'k{i % 3}', int(i)))")
    assert run(shell, cell + edited).success
    restored = run(shell, f"%flow run numbered --parallelism 3 --from-savepoint {savepoint}")
    assert restored.success, restored.out
    (second,) = magics(shell).pipelines["numbered"].jobs  # the edited cell's pipeline
    while second.printed_total < 50 and time.time() < deadline:
        time.sleep(0.2)
    assert run(shell, "%flow cancel numbered").success
    after = _rows(second)
    # Every generated index once over both runs, and each key's count on by one across them.
    indices = sorted(index for _key, index, _count in before + after)
    assert indices == list(range(len(indices))) and min(index for _key, index, _count in after) == len(before)
    counts: dict[str, list[int]] = {}
    for key, _index, count in before + after:
        counts.setdefault(key, []).append(count)
    assert all(sorted(values) == list(range(1, len(values) + 1)) for values in counts.values()), counts


@pytest.mark.e2e
def test_cancel_returns_while_an_epoch_is_stuck_in_a_user_function(shell, tmp_path) -> None:
    marker = tmp_path / "stuck"
    cell = "%%flow stuck --parallelism 1 --show none\nimport time\n"
    cell += f"def stuck(i):\n    if i == 50:\n        open({str(marker)!r}, 'w').write('x')\n        time.sleep(1000)\n"
    cell += "    return i\n"
    cell += "env.from_datagen(lambda i: i, rows_per_second=100).map(stuck).print()\n"
    assert run(shell, cell).success
    assert run(shell, "%flow run stuck").success
    (job,) = magics(shell).pipelines["stuck"].jobs
    deadline = time.time() + 180
    while not marker.exists() and time.time() < deadline:
        time.sleep(0.1)
    assert marker.exists()
    # In a thread, so that a cancel that hangs fails the test rather than hanging it.
    outcome: list = []
    began = time.monotonic()
    cancelling = threading.Thread(target=lambda: outcome.append(run(shell, "%flow cancel stuck")), daemon=True)
    cancelling.start()
    cancelling.join(60)
    assert not cancelling.is_alive(), "%flow cancel hangs while a user function is stuck"
    assert time.monotonic() - began < 15
    (ran,) = outcome
    assert ran.success and "Cancelled 1 run of 'stuck'" in ran.out
    assert f"Job {job.get_job_id()}: the Spark jobs of job group" in ran.out
    assert job.get_job_status().name == "CANCELED"
