"""Properties over random programs: ids are topology-only and stable; chains are valid."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flowmagic

_UNARY = [
    "{s}.map(lambda x: x)",
    "{s}.filter(lambda x: True)",
    "{s}.flat_map(lambda x: [x])",
    "{s}.key_by(lambda k: k).sum(0)",
    "{s}.key_by(lambda k: k).reduce(lambda a, b: a)",
    "{s}.rebalance().map(lambda x: x)",
    "{s}.rescale().map(lambda x: x)",
    "{s}.broadcast().map(lambda x: x)",
    "{s}.shuffle().map(lambda x: x)",
    "{s}.process(lambda v, c, o: None)",
]
_SETTINGS = ["", ".set_parallelism({p})", ".slot_sharing_group('g{p}')", ".disable_chaining()", ".start_new_chain()"]


@st.composite
def programs(draw) -> str:
    """Source code of a random DataStream program over ``env``."""
    lines = [f"env.set_parallelism({draw(st.integers(1, 4))})"]
    streams = []
    for index in range(draw(st.integers(1, 2))):
        source = draw(st.sampled_from(["env.from_sequence(1, 10)", "env.from_collection([1, 2])"]))
        lines.append(f"s{index} = {source}")
        streams.append(f"s{index}")
    for step in range(draw(st.integers(1, 12))):
        name = f"t{step}"
        if len(streams) > 1 and draw(st.booleans()) and draw(st.booleans()):
            a, b = draw(st.permutations(streams))[:2]
            expression = f"{a}.union({b}).map(lambda x: x)"
        else:
            expression = draw(st.sampled_from(_UNARY)).format(s=draw(st.sampled_from(streams)))
        setting = draw(st.sampled_from(_SETTINGS)).format(p=draw(st.integers(1, 4)))
        lines.append(f"{name} = {expression}{setting}")
        streams.append(name)
    for stream in draw(st.lists(st.sampled_from(streams), min_size=1, max_size=3, unique=True)):
        lines.append(f"{stream}.print()")
    return "\n".join(lines)


def _ids(source: str) -> list[list[str]]:
    env = flowmagic.StreamExecutionEnvironment()
    exec(source, {"env": env})
    return [[v.id, *(p.generated for p in v.operator_ids)] for v in env.get_job_graph().sorted_vertices()]


_SETTINGS_PROFILE = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS_PROFILE
@given(programs())
def test_renaming_and_function_bodies_never_change_ids(source: str) -> None:
    renamed = source.replace("lambda x: x)", "lambda x: x * 2).name('renamed <&>')")
    assert _ids(renamed) == _ids(source)


@_SETTINGS_PROFILE
@given(programs())
def test_chains_never_mix_parallelism_or_slot_sharing_groups(source: str) -> None:
    env = flowmagic.StreamExecutionEnvironment()
    exec(source, {"env": env})
    stream_graph = env.get_stream_graph()
    for vertex in stream_graph.get_job_graph().vertices.values():
        nodes = [stream_graph.node(n) for n in vertex.chain]
        assert len({n.parallelism for n in nodes}) == 1
        assert len({n.slot_sharing_group for n in nodes}) == 1
        assert len(vertex.operator_ids) == len(vertex.chain)


@settings(max_examples=1, deadline=None)
@given(st.lists(programs(), min_size=25, max_size=25))
def test_ids_are_identical_in_a_fresh_process(sources: list[str]) -> None:
    script = (
        "import json, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from test_graph_properties import _ids\n"
        "print(json.dumps([_ids(s) for s in json.load(sys.stdin)]))\n"
    )
    import pathlib

    here = str(pathlib.Path(__file__).parents[1])
    out = subprocess.run(
        [sys.executable, "-c", script, here], input=json.dumps(sources), capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == [_ids(s) for s in sources]


def test_breaking_a_chain_changes_ids() -> None:
    def ids(breaker: str) -> list[str]:
        env = flowmagic.StreamExecutionEnvironment(parallelism=2)
        stream = env.from_sequence(1, 10).map(lambda x: x)
        getattr(stream.filter(lambda x: True), breaker)().print() if breaker else stream.filter(lambda x: True).print()
        return [v.id for v in env.get_job_graph().vertices.values()]

    assert ids("") != ids("disable_chaining")
    assert ids("") == ids("")
