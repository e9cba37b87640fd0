"""Flink SQL planning against what real Flink 2.3.0 printed (tests/conformance/sql).

Every ``expected/*.json`` there is checked, mode by mode, field by field: the EXPLAIN text, the
EXPLAIN CHANGELOG_MODE and JSON_EXECUTION_PLAN texts, the job name (the validator's expanded
query), and the StreamGraph, JobGraph and job plan a ``%%flow NAME --sql`` pipeline builds. Cases another
branch records into the same folders are picked up without editing this file; what the planner
does not plan yet is listed in ``NOT_YET`` with the reason, as strict xfail, so it flags the day
it starts passing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from flowmagic import FlowError
from flowmagic.sql_pipeline import SqlPipeline
from flowmagic.table import EnvironmentSettings, ExplainDetail, TableEnvironment

HERE = Path(__file__).parents[1] / "conformance" / "sql"
FIELDS = ("explain", "explain_changelog_mode", "explain_json_execution_plan", "job_name")
GRAPH_FIELDS = ("stream_plan", "stream_graph", "job_graph", "job_plan")
_SET = re.compile(r"^SET\s+'([^']+)'\s*=\s*'([^']*)'$", re.I | re.S)

#: (case, mode, field) the planner does not plan yet, and why. The r* entries are cases the
#: sql-cases branch records; their texts were checked against Flink 2.3's planner.
NOT_YET: dict[tuple[str, str, str], str] = {
    **{
        (
            "r26_values_simplification",
            mode,
            "job_name",
        ): "MOD(a, 3) unparses as a % 3: sqlglot parses both into one node"
        for mode in ("streaming", "batch")
    },
    **{
        ("r31_expression_semantics", mode, "job_name"): "MOD(a, b) unparses as a % b: sqlglot parses both into one node"
        for mode in ("streaming", "batch")
    },
    **{
        ("r62_csv_statistics_aggregate", mode, "job_name"): "MOD(id, 2) unparses as id % 2: sqlglot parses both "
        "into one node"
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
        if field == "explain_json_execution_plan":
            return t_env.explain_sql(query, ExplainDetail.JSON_EXECUTION_PLAN)
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


#: The fields compared as the DataStream cases compare them (the recorded graphs carry more,
#: informative ones: operator factories and classes, managed memory).
_NODE_FIELDS = ("id", "name", "parallelism", "max_parallelism", "slot_sharing_group", "chaining_strategy", "uid")
_EDGE_FIELDS = ("target", "partitioner", "type_number", "output_tag", "exchange_mode")
_VERTEX_FIELDS = ("id", "name", "parallelism", "max_parallelism", "slot_sharing_group", "operator_ids", "invokable")
_INPUT_FIELDS = ("source_vertex", "ship_strategy", "distribution_pattern", "result_partition_type")
_PLAN_NODE_FIELDS = ("id", "parallelism", "description", "inputs", "operator", "operator_strategy")


def _pick(item: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {field: item.get(field) for field in fields}


def _comparable(field: str, document: dict[str, Any]) -> object:
    if field == "stream_plan":
        return document
    if field == "stream_graph":
        nodes = [
            {
                **_pick(n, (*_NODE_FIELDS, "operator_id")),
                "out_edges": [_pick(e, _EDGE_FIELDS) for e in n["out_edges"]],
            }
            for n in document["nodes"]
        ]
        return {"nodes": nodes, "sources": sorted(document["source_ids"]), "sinks": sorted(document["sink_ids"])}
    if field == "job_graph":
        return [
            {**_pick(v, _VERTEX_FIELDS), "inputs": [_pick(i, _INPUT_FIELDS) for i in v["inputs"]]}
            for v in document["vertices"]
        ]
    return {"type": document["type"], "nodes": [_pick(n, _PLAN_NODE_FIELDS) for n in document["nodes"]]}


def _graph_params() -> list[object]:
    params = []
    for path in sorted((HERE / "expected").glob("*.json")):
        recorded = json.loads(path.read_text())
        for mode in ("streaming", "batch"):
            if not isinstance(recorded[mode].get("stream_graph"), dict):
                continue
            for field in (*GRAPH_FIELDS, "physical_execution_plan"):
                key = (path.stem, mode, field)
                marks = [pytest.mark.xfail(reason=NOT_YET[key], strict=True)] if key in NOT_YET else []
                params.append(pytest.param(*key, marks=marks, id="-".join(key)))
    return params


def _pipeline(case: str, mode: str) -> SqlPipeline:
    """The pipeline of a ``%%flow NAME --sql`` cell holding the case, as the README's checks run it."""
    script = "\n".join(
        [
            "SET 'parallelism.default' = '2';",
            "SET 'table.local-time-zone' = 'UTC';",
            f"SET 'execution.runtime-mode' = '{mode}';",
            *(f"{statement};" for statement in _statements(case)),
        ]
    )
    return SqlPipeline("sqlcase", script)


@pytest.mark.parametrize(("case", "mode", "field"), _graph_params())
def test_sql_graphs_match_flink(case: str, mode: str, field: str) -> None:
    """The graphs Flink would submit for the statement (a SELECT with its collect sink), and
    EXPLAIN JSON_EXECUTION_PLAN's StreamGraph (the query's own, without the collect sink)."""
    recorded = json.loads((HERE / "expected" / f"{case}.json").read_text())[mode]
    if field == "physical_execution_plan":
        *setup, query = _statements(case)
        text = _environment(mode, setup).explain_sql(query, ExplainDetail.JSON_EXECUTION_PLAN)
        assert json.loads(text.split("== Physical Execution Plan ==\n", 1)[1]) == recorded[field]
        return
    pipeline = _pipeline(case, mode)
    job_graph = pipeline.job_graph
    actual = {
        "stream_plan": pipeline.stream_graph.to_plan(),
        "stream_graph": pipeline.stream_graph.to_dict(),
        "job_graph": job_graph.to_dict(),
        "job_plan": job_graph.to_plan(),
    }[field]
    assert _comparable(field, actual) == _comparable(field, recorded[field])


def test_transformation_ids_continue_over_a_sessions_statements() -> None:
    """Flink numbers transformations per session: a second EXPLAIN JSON_EXECUTION_PLAN shows the
    next ids (and ExecNode ids), a fresh environment starts again at 1. Generating a StreamGraph
    draws an id for each partitioning's virtual node too (Flink's PartitionTransformationTranslator
    calls Transformation.getNewNodeId()), so the second statement starts at 5, not 4."""
    *setup, query = _statements("s01_seed_group_count")
    t_env = _environment("streaming", setup)
    first = t_env.explain_sql(query, ExplainDetail.JSON_EXECUTION_PLAN)
    second = t_env.explain_sql(query, ExplainDetail.JSON_EXECUTION_PLAN)
    ids = [
        [n["id"] for n in json.loads(t.split("== Physical Execution Plan ==\n")[1])["nodes"]] for t in (first, second)
    ]
    assert ids == [[1, 3], [5, 7]]
    assert '"type" : "GroupAggregate[6]"' in second
    fresh = _environment("streaming", setup).explain_sql(query, ExplainDetail.JSON_EXECUTION_PLAN)
    assert fresh == first


def _session_params() -> list[object]:
    params = []
    for path in sorted((HERE / "expected").glob("*.json")):
        recorded = json.loads(path.read_text())
        for mode in ("streaming", "batch"):
            if recorded[mode].get("explain_session"):
                params.append(pytest.param(path.stem, mode, id=f"{path.stem}-{mode}"))
    return params


@pytest.mark.parametrize(("case", "mode"), _session_params())
def test_explains_in_one_session_advance_the_id_counters_as_flinks(case: str, mode: str) -> None:
    """The EXPLAINs a case recorded one after the other in ONE session (the plain one included:
    Flink translates every explained statement), each text exactly as Flink printed it."""
    *setup, query = _statements(case)
    t_env = _environment(mode, setup)
    for step in json.loads((HERE / "expected" / f"{case}.json").read_text())[mode]["explain_session"]:
        details = [ExplainDetail[name] for name in step["details"]]
        assert t_env.explain_sql(query, *details) == step["text"]
