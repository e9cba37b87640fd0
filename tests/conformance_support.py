"""Run a conformance case the way the fixtures' README prescribes and compare with Flink."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import flowmagic

CONFORMANCE = Path(__file__).parent / "conformance"
INFORMATIVE_VERTEX_FIELDS = ("invokable", "slot_sharing_group_index")


def run_case(source: str, filename: str) -> tuple[flowmagic.StreamExecutionEnvironment, dict[str, Any]]:
    """Execute a case body with the DSL names and a fresh ``env``; return env and namespace."""
    namespace: dict[str, Any] = {name: getattr(flowmagic, name) for name in flowmagic.__all__}
    env = flowmagic.StreamExecutionEnvironment()
    namespace["env"] = env
    exec(compile(source, filename, "exec"), namespace)
    return env, namespace


def drop_paths(document: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    """Remove the fields the fixture marks as nondeterministic (``a.b[id=x].c`` paths)."""
    document = copy.deepcopy(document)
    for path in paths:
        _drop(document, path.split("."))
    return document


def _drop(node: Any, parts: list[str]) -> None:
    head, rest = parts[0], parts[1:]
    match = re.fullmatch(r"(\w+)\[id=([^\]]+)\]", head)
    if match:
        key, wanted = match.groups()
        for item in node.get(key, []):
            if str(item.get("id")) == wanted:
                _drop(item, rest)
        return
    if not rest:
        node.pop(head, None)
    elif head in node:
        _drop(node[head], rest)


def actual_documents(env: flowmagic.StreamExecutionEnvironment) -> dict[str, Any]:
    """What flowmagic builds for the program in ``env``, in the fixtures' layout."""
    import json

    plan = json.loads(env.get_execution_plan())
    stream_graph = env.get_stream_graph()
    job_graph = stream_graph.get_job_graph()
    return {
        "stream_plan": plan,
        "stream_graph": stream_graph.to_dict(),
        "job_graph": job_graph.to_dict(),
        "job_plan": job_graph.to_plan(),
    }
