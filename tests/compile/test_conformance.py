"""Every conformance case builds exactly what real Flink 2.3 built for it.

``conformance/flink`` holds the project's fixtures; ``conformance/oracle`` holds more
cases, each written 1:1 in Java against flink-dist 2.3.0 and dumped from it outside this
repository (same schema).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conformance_support import CONFORMANCE, actual_documents, drop_paths, run_case

import flowmagic

CASES = sorted((CONFORMANCE / "flink" / "cases").glob("*.py")) + sorted((CONFORMANCE / "oracle" / "cases").glob("*.py"))


def _expected(case: Path) -> dict:
    return json.loads((case.parent.parent / "expected" / f"{case.stem}.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_case_matches_flink(case: Path) -> None:
    expected = _expected(case)
    source = case.read_text()
    if expected.get("error"):
        with pytest.raises(flowmagic.FlowError) as raised:
            env, _ = run_case(source, str(case))
            actual_documents(env)
        assert expected["error"]["message"] in str(raised.value)
        return
    env, _ = run_case(source, str(case))
    actual = drop_paths(actual_documents(env), expected.get("nondeterministic_fields_dropped", []))
    assert actual["stream_plan"] == expected["stream_plan"]
    assert actual["stream_graph"] == expected["stream_graph"]
    assert actual["job_graph"] == expected["job_graph"]
    expected_plan = {k: v for k, v in expected["job_plan"].items() if k != "name"}
    actual_plan = {k: v for k, v in actual["job_plan"].items() if k != "name"}
    assert actual_plan == expected_plan
