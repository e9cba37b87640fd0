"""``execute_and_collect()`` gives exactly the records real Flink 2.3 emitted."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conformance_support import CONFORMANCE, run_case

RUNTIME = CONFORMANCE / "runtime"
# runtime/: the project's fixtures; runtime_oracle/: more programs run on flink-dist 2.3.0
# with watermarks emitted after every record, as flowmagic schedules them.
CASES = sorted(RUNTIME.glob("*.py")) + sorted((CONFORMANCE / "runtime_oracle").glob("*.py"))


def _as_json(records: list) -> list:
    return json.loads(json.dumps(records))


def _by_key(records: list, position: int) -> dict:
    grouped: dict = {}
    for record in records:
        grouped.setdefault(json.dumps(record[position]), []).append(record)
    return grouped


@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_runtime_output_matches_flink(case: Path, spark) -> None:
    expected = json.loads((case.parent / "expected" / f"{case.stem}.json").read_text())
    _env, namespace = run_case(case.read_text(), str(case))
    actual = _as_json(list(namespace["result"].execute_and_collect()))
    records = expected["records"]
    if expected["ordered"]:
        assert actual == records
    else:
        assert Counter(map(json.dumps, actual)) == Counter(map(json.dumps, records))
    if expected.get("ordered_within_key") is not None:
        position = expected["ordered_within_key"]
        assert _by_key(actual, position) == _by_key(records, position)


def test_runs_are_repeatable(spark) -> None:
    source = (RUNTIME / "r02_wordcount_streaming.py").read_text()
    outputs = []
    for _ in range(2):
        _env, namespace = run_case(source, "r02")
        outputs.append(list(namespace["result"].execute_and_collect()))
    assert outputs[0] == outputs[1]
