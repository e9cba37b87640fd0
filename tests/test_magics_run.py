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
    cell = "%%flow slow --show none\nimport time\n"
    cell += "env.from_sequence(1, 100000).map(lambda x: time.sleep(0.01) or x).print()\n"
    assert run(shell, cell).success
    assert run(shell, "%flow run slow --background").success
    pipeline = magics(shell).pipelines["slow"]
    deadline = time.time() + 60
    while pipeline._cancel is None and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1)
    ran = run(shell, "%flow cancel slow")
    assert ran.success and "Cancelling 'slow'" in ran.out
    while pipeline._cancel is not None and time.time() < deadline:
        time.sleep(0.05)
    assert pipeline._cancel is None
    assert not run(shell, "%flow cancel slow").success
    assert threading.active_count() < 50
