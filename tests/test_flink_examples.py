"""Flink's classic Java examples (flink-examples-streaming) written with flowmagic's API print
what the Java programs printed on flink-dist 2.3.0, subtask prefixes included."""

from __future__ import annotations

from conformance_support import CONFORMANCE, run_case

EXAMPLES = CONFORMANCE / "flink_examples"


def test_window_word_count_prints_javas_lines_on_javas_subtasks() -> None:
    # The records are the runtime case r100; here, where Flink printed them. Lines of
    # different words interleave by timing in Flink, so the lines are compared as a set.
    case = CONFORMANCE / "runtime_oracle" / "r100_window_word_count.py"
    env, namespace = run_case(case.read_text(), str(case))
    namespace["result"].print()
    printed = [line for _stderr, line in env.execute(executor="local").printed]
    expected = (EXAMPLES / "expected" / "window_word_count.txt").read_text().splitlines()
    assert sorted(printed) == sorted(expected)
