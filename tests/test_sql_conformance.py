"""Flink SQL planning against what real Flink 2.3.0 printed (tests/conformance/sql).

Every ``expected/*.json`` there is checked, mode by mode, field by field: the EXPLAIN text, the
EXPLAIN CHANGELOG_MODE text and the job name (the validator's expanded query). Cases another
branch records into the same folders are picked up without editing this file; what the planner
does not plan yet is listed in ``NOT_YET`` with the reason, as strict xfail, so it flags the day
it starts passing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from flowmagic import FlowError
from flowmagic.table import EnvironmentSettings, ExplainDetail, TableEnvironment

HERE = Path(__file__).parent / "conformance" / "sql"
FIELDS = ("explain", "explain_changelog_mode", "job_name")
_SET = re.compile(r"^SET\s+'([^']+)'\s*=\s*'([^']*)'$", re.I | re.S)

_BATCH_PHYSICAL = "batch joins of tables fused with a Calc into a MultipleInput come next"

#: (case, mode, field) the planner does not plan yet, and why. The r* entries are cases the
#: sql-cases branch records; their texts were checked against Flink 2.3's planner.
NOT_YET: dict[tuple[str, str, str], str] = {
    ("s10_interval_join", "batch", "explain"): _BATCH_PHYSICAL,
    **{
        (
            "r26_values_simplification",
            mode,
            "job_name",
        ): "MOD(a, 3) unparses as a % 3: sqlglot parses both into one node"
        for mode in ("streaming", "batch")
    },
}


def _statements(case: str) -> list[str]:
    text = (HERE / "cases" / f"{case}.sql").read_text().replace("${SQL_DATA}", str(HERE / "data"))
    body = "\n".join(line for line in text.splitlines() if not line.strip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*$", body, flags=re.M) if s.strip()]


def _params() -> list[object]:
    params = []
    for path in sorted((HERE / "expected").glob("*.json")):
        recorded = json.loads(path.read_text())
        for mode in ("streaming", "batch"):
            stage = recorded[mode]
            if "skipped" in stage:
                continue  # Flink itself did not run this mode (the case says why)
            for field in FIELDS:
                if stage.get(field) is None:
                    continue
                key = (path.stem, mode, field)
                marks = [pytest.mark.xfail(reason=NOT_YET[key], strict=True)] if key in NOT_YET else []
                params.append(pytest.param(*key, marks=marks, id="-".join(key)))
    return params


def _environment(mode: str, setup: list[str]) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "2")
    t_env.get_config().set("table.local-time-zone", "UTC")
    for statement in setup:
        t_env.execute_sql(statement)
    return t_env


@pytest.mark.parametrize(("case", "mode", "field"), _params())
def test_sql_case_matches_flink(case: str, mode: str, field: str) -> None:
    recorded = json.loads((HERE / "expected" / f"{case}.json").read_text())[mode][field]
    *setup, query = _statements(case)
    t_env = _environment(mode, setup)

    def produce() -> str:
        if field == "explain":
            return t_env.explain_sql(query)
        if field == "explain_changelog_mode":
            return t_env.explain_sql(query, ExplainDetail.CHANGELOG_MODE)
        return t_env.session.job_name(query)

    if isinstance(recorded, dict) and "error" in recorded:
        with pytest.raises(FlowError) as raised:
            produce()
        assert str(raised.value) == recorded["error"]["message"]
        assert type(raised.value).__name__ == recorded["error"]["class"]
    else:
        assert produce() == recorded


def _compiled_params() -> list[object]:
    params = []
    for path in sorted((HERE / "expected").glob("*.json")):
        stage = json.loads(path.read_text())["streaming"]
        plan = stage.get("compiled_plan")
        if isinstance(plan, dict) and "nodes" in plan:
            key = (path.stem, "streaming", "compiled_plan")
            marks = [pytest.mark.xfail(reason=NOT_YET[key], strict=True)] if key in NOT_YET else []
            params.append(pytest.param(path.stem, marks=marks, id=path.stem))
    return params


def _required(properties: list[dict[str, object]] | None) -> list[object]:
    return [p["requiredDistribution"] for p in properties or []]


@pytest.mark.parametrize("case", _compiled_params())
def test_exec_node_graph_matches_flinks_compiled_plan(case: str) -> None:
    """The ExecNode graph (ids, type names, descriptions, required distributions, output types,
    edges) of the statement Flink compiled: the query INSERTed into a blackhole table."""
    stage = json.loads((HERE / "expected" / f"{case}.json").read_text())["streaming"]
    *setup, query = _statements(case)
    t_env = _environment("streaming", setup)
    if not query.lstrip().upper().startswith("INSERT"):
        columns = ", ".join(
            f"`{name}` {re.sub(r' [*](ROW|PROC)TIME[*]', '', kind)}"
            for name, kind in t_env.sql_query(query).get_schema()
        )
        t_env.execute_sql(f"CREATE TABLE oracle_blackhole_sink ({columns}) WITH ('connector' = 'blackhole')")
    from flowmagic.sql.exec_nodes import nodes

    graph = nodes(t_env.session.compile(stage["compiled_plan_statement"]))
    want = stage["compiled_plan"]
    assert [(n.id, n.type, n.description) for n in graph] == [
        (n["id"], n["type"], n["description"]) for n in want["nodes"]
    ]
    got_inputs = [
        [{"type": p.distribution, **({"keys": list(p.keys)} if p.keys else {})} for p in n.input_properties]
        for n in graph
    ]
    assert got_inputs == [_required(n.get("inputProperties")) for n in want["nodes"]]
    assert [n.output_type() for n in graph] == [n["outputType"] for n in want["nodes"]]
    edges = [(i.id, n.id) for n in graph for i in n.inputs]
    assert edges == [(e["source"], e["target"]) for e in want["edges"]]


def _session_params() -> list[object]:
    return [
        pytest.param(path.stem, mode, id=f"{path.stem}-{mode}")
        for path in sorted((HERE / "expected").glob("*.json"))
        for mode, stage in json.loads(path.read_text()).items()
        if isinstance(stage, dict) and stage.get("explain_session")
    ]


@pytest.mark.parametrize(("case", "mode"), _session_params())
def test_explains_in_one_session_continue_the_exec_node_ids(case: str, mode: str) -> None:
    """Several EXPLAINs in ONE session (``explain_session``): each text as Flink printed it, and
    the ExecNode ids going on from the previous statement, plain EXPLAINs included: the
    ``[id]:Name`` each JSON_EXECUTION_PLAN step shows are the ids of the operators' ExecNodes
    that statement numbered. (That section's StreamGraph itself is SQL part 2's.)"""
    from flowmagic.sql.exec_nodes import ExecGraphBuilder, nodes
    from flowmagic.sql.optimize import optimize

    steps = json.loads((HERE / "expected" / f"{case}.json").read_text())[mode]["explain_session"]
    *setup, query = _statements(case)
    t_env = _environment(mode, setup)
    session = t_env.session
    for step in steps:
        plan, marker, stream_graph = step["text"].partition("\n== Physical Execution Plan ==\n")
        details = [ExplainDetail[d] for d in step["details"] if d != "JSON_EXECUTION_PLAN"]
        start = session.exec_node_ids
        assert t_env.explain_sql(query, *details) == (plan if marker else step["text"])
        # The same statement numbered again from where the EXPLAIN started: the ids it took.
        builder = ExecGraphBuilder(start, session.streaming)
        graph = nodes(builder.build(optimize(session.plan(query).logical, session.streaming, session.configuration)))
        assert builder.next_id == session.exec_node_ids
        if marker:
            shown = re.findall(r'"contents" : "\[(\d+)\]:(\w+)', stream_graph)
            assert sorted((n.id, n.name) for n in graph if n.name != "Exchange") == [(int(i), n) for i, n in shown]
