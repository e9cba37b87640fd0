"""``execute_and_collect()`` gives exactly the records real Flink 2.3 emitted, on both executors.

The local executor runs every case in this process (seconds, no JVM); the Spark executor
must give the same records in the same order as the local one, and Flink's.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conformance_support import CONFORMANCE, run_case

RUNTIME = CONFORMANCE / "runtime"
# runtime/: the project's fixtures; runtime_oracle/: more programs run on flink-dist 2.3.0
# whose watermarks are those of their Java twins (punctuated generators where the twin has one).
CASES = sorted(RUNTIME.glob("*.py")) + sorted((CONFORMANCE / "runtime_oracle").glob("*.py"))


def _as_json(records: list) -> list:
    return json.loads(json.dumps(records))


def _by_key(records: list, position: int) -> dict:
    grouped: dict = {}
    for record in records:
        grouped.setdefault(json.dumps(record[position]), []).append(record)
    return grouped


def _collect(case: Path, executor: str) -> list:
    _env, namespace = run_case(case.read_text(), str(case))
    return _as_json(list(namespace["result"].execute_and_collect(executor=executor)))


def _check_against_flink(case: Path, actual: list) -> None:
    expected = json.loads((case.parent / "expected" / f"{case.stem}.json").read_text())
    records = expected["records"]
    if expected["ordered"]:
        assert actual == records
    else:
        assert Counter(map(json.dumps, actual)) == Counter(map(json.dumps, records))
    if expected.get("ordered_within_key") is not None:
        position = expected["ordered_within_key"]
        assert _by_key(actual, position) == _by_key(records, position)


@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_local_executor_output_matches_flink(case: Path) -> None:
    _check_against_flink(case, _collect(case, "local"))


@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_spark_executor_output_matches_flink_and_the_local_executor(case: Path, spark) -> None:
    actual = _collect(case, "spark")
    _check_against_flink(case, actual)
    assert actual == _collect(case, "local")


def test_runs_are_repeatable(spark) -> None:
    source = (RUNTIME / "r02_wordcount_streaming.py").read_text()
    outputs = []
    for _ in range(2):
        _env, namespace = run_case(source, "r02")
        outputs.append(list(namespace["result"].execute_and_collect()))
    assert outputs[0] == outputs[1]
