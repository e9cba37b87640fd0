"""The public surface is pinned, and the layers import downward only."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import flowmagic

PACKAGE = Path(flowmagic.__file__).parent


def test_all_is_pinned() -> None:
    assert sorted(flowmagic.__all__) == sorted(
        [
            "AggregateFunction", "CoFlatMapFunction", "CoGroupFunction", "CoMapFunction", "CoProcessFunction",
            "CountEvictor", "FlatJoinFunction", "JoinFunction", "ProcessJoinFunction",
            "CountTrigger", "Duration", "Encoder", "EventTimeSessionWindows", "FileSink", "FilterFunction",
            "FlatMapFunction", "FlowError", "GlobalWindows", "KeySelector", "KeyedCoProcessFunction",
            "ListStateDescriptor", "MapStateDescriptor", "ValueStateDescriptor",
            "ReducingStateDescriptor", "AggregatingStateDescriptor", "StateTtlConfig",
            "BroadcastProcessFunction", "KeyedBroadcastProcessFunction",
            "KeyedProcessFunction", "MapFunction", "OutputTag", "Partitioner", "ProcessFunction",
            "ProcessWindowFunction", "ProcessingTimeSessionWindows", "PurgingTrigger", "ReduceFunction", "Row",
            "RuntimeExecutionMode", "SinkFunction", "SlidingEventTimeWindows", "SlidingProcessingTimeWindows",
            "StreamExecutionEnvironment", "Time", "TumblingEventTimeWindows", "TumblingProcessingTimeWindows",
            "Types", "Watermark", "WatermarkGenerator", "WatermarkStrategy", "WindowFunction",
            "assign_key_to_parallel_operator", "assign_to_key_group",
            "BucketAssigner", "OutputFileConfig", "RollingPolicy",
            "compute_default_max_parallelism",
        ]
    )  # fmt: skip
    # Every public name is flowmagic's own (nothing re-exported by accident from elsewhere).
    for name in flowmagic.__all__:
        assert getattr(flowmagic, name).__module__.startswith("flowmagic."), name


def test_api_methods_exist() -> None:
    env = flowmagic.StreamExecutionEnvironment()
    for method in [
        "set_parallelism",
        "get_parallelism",
        "set_max_parallelism",
        "disable_operator_chaining",
        "set_runtime_mode",
        "from_collection",
        "from_sequence",
        "read_text_file",
        "socket_text_stream",
        "from_datagen",
        "get_execution_plan",
        "get_stream_graph",
        "get_job_graph",
        "get_execution_graph",
        "execute",
    ]:
        assert callable(getattr(env, method)), method
    stream = env.from_sequence(1, 2).map(lambda x: x)
    for method in [
        "map",
        "flat_map",
        "filter",
        "process",
        "key_by",
        "union",
        "connect",
        "shuffle",
        "rebalance",
        "rescale",
        "broadcast",
        "forward",
        "global_",
        "partition_custom",
        "assign_timestamps_and_watermarks",
        "window_all",
        "count_window_all",
        "get_side_output",
        "print",
        "sink_to",
        "execute_and_collect",
        "set_parallelism",
        "set_max_parallelism",
        "name",
        "uid",
        "set_uid_hash",
        "slot_sharing_group",
        "disable_chaining",
        "start_new_chain",
    ]:
        assert callable(getattr(stream, method)), method
    keyed = stream.key_by(lambda x: x)
    for method in ["sum", "min", "max", "min_by", "max_by", "reduce", "process", "window", "count_window"]:
        assert callable(getattr(keyed, method)), method
    windowed = keyed.count_window(3)
    for method in ["reduce", "aggregate", "sum", "min", "max", "process"]:
        assert callable(getattr(windowed, method)), method
    connected = stream.connect(stream)
    for method in ["map", "flat_map", "process", "key_by"]:
        assert callable(getattr(connected, method)), method


_LAYERS = {
    "errors": 0,
    "key_groups": 0,
    "graph": 1,
    # What programs are written in and the runtime runs: functions, types, windows, state, time.
    "vocabulary": 2,
    "compile": 3,
    "render": 4,
    "runtime": 4,
    # Every way of running a job: compile, then run on the executor the graph needs.
    "executors": 5,
    # The program builder (environment, streams) and PyFlink's module names over it.
    "api": 6,
    "common": 6,
    "datastream": 6,
    # Flink SQL, the second front end: the planner, then PyFlink's Table API names over it.
    "sql": 7,
    "table": 8,
    "widgets": 9,
    "pipeline": 10,
    "magics": 11,
}

#: Imports of a higher layer, deliberately deferred into a function: (importing file, module).
_UPWARD_IMPORTS_ALLOWED: set[tuple[str, str]] = set()


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _module_imports(path: Path) -> list[str]:
    """Every module ``path`` imports at run time: at module level and inside functions
    (imports under ``if TYPE_CHECKING:`` are for type checkers only and are skipped)."""
    tree = ast.parse(path.read_text())
    skipped = {id(child) for node in ast.walk(tree) if _is_type_checking_block(node) for child in ast.walk(node)}
    names = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "flowmagic":
            # ``from flowmagic import compile`` imports the module flowmagic.compile.
            names.extend(f"flowmagic.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def _layer(module_path: tuple[str, ...]) -> str:
    return module_path[0].removesuffix(".py")


def _upward_imports(package: Path) -> set[tuple[str, str]]:
    """(file, module) of every import in ``package`` of a module of a higher layer."""
    upward = set()
    for path in package.rglob("*.py"):
        relative = path.relative_to(package)
        layer = _layer(relative.parts)
        for module in _module_imports(path):
            parts = module.split(".")
            if parts[0] != "flowmagic" or len(parts) < 2:
                continue
            target = parts[1]
            if target == layer or layer not in _LAYERS or target not in _LAYERS:
                continue
            if _LAYERS[target] > _LAYERS[layer]:
                upward.add((relative.as_posix(), module))
    return upward


def test_layers_import_downward_only() -> None:
    assert _upward_imports(PACKAGE) == _UPWARD_IMPORTS_ALLOWED


def test_the_vocabulary_imports_nothing_above_the_graphs() -> None:
    assert _LAYERS["vocabulary"] == _LAYERS["graph"] + 1
    assert not {(file, module) for file, module in _upward_imports(PACKAGE) if file.startswith("vocabulary/")}


def test_no_runtime_module_imports_the_program_builder() -> None:
    assert _LAYERS["runtime"] < _LAYERS["api"]
    assert not {(file, module) for file, module in _upward_imports(PACKAGE) if file.startswith("runtime/")}


def test_the_layering_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from flowmagic.magics import FlowMagics\n"
        "def f():\n    from flowmagic.runtime import execute\n"
    )
    assert _module_imports(module) == ["typing", "flowmagic.runtime"]


def test_the_layering_check_finds_planted_violations(tmp_path: Path) -> None:
    (tmp_path / "runtime").mkdir()
    (tmp_path / "runtime" / "operator.py").write_text(
        "from flowmagic.vocabulary.functions import MapFunction\n"
        "def run():\n    from flowmagic.api.datastream import DataStream\n"
        "def stop():\n    from flowmagic import executors\n"
    )
    (tmp_path / "vocabulary").mkdir()
    (tmp_path / "vocabulary" / "windows.py").write_text(
        "from flowmagic.graph.operators import OperatorSpec\nimport flowmagic.compile.chaining\n"
    )
    assert _upward_imports(tmp_path) == {
        ("runtime/operator.py", "flowmagic.api.datastream"),
        ("runtime/operator.py", "flowmagic.executors"),
        ("vocabulary/windows.py", "flowmagic.compile.chaining"),
    }


def test_the_graph_layer_imports_no_compile_pass() -> None:
    for path in (PACKAGE / "graph").rglob("*.py"):
        assert "flowmagic.compile" not in path.read_text(), path


def test_the_engine_does_not_load_ipython_or_pyspark() -> None:
    code = (
        "import sys, flowmagic\n"
        "env = flowmagic.StreamExecutionEnvironment(); env.from_sequence(1, 3).print(); env.get_execution_graph()\n"
        "print(sorted(m for m in ('IPython', 'pyspark', 'ipywidgets') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_program_builder_runs_jobs_only_through_the_executors() -> None:
    """The builder hands its StreamGraph to :mod:`flowmagic.executors`: no module of it
    imports the runtime (which runs the jobs) itself."""
    builder = PACKAGE / "api"
    imports = {(path.name, module) for path in builder.rglob("*.py") for module in _module_imports(path)}
    assert {(name, module) for name, module in imports if module.startswith("flowmagic.runtime")} == set()
    assert ("environment.py", "flowmagic.executors") in imports


def _private_members_of_the_environment() -> set[str]:
    tree = ast.parse((PACKAGE / "api" / "environment.py").read_text())
    environment = next(
        node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "StreamExecutionEnvironment"
    )
    names = set()
    for node in ast.walk(environment):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_") and not node.name.startswith("__"):
            names.add(node.name)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            names.add(node.attr)
    return names


def _private_uses(path: Path, names: set[str]) -> list[str]:
    """``x._name`` for a name of ``names`` on anything but ``self``, in ``path``."""
    return [
        f"{path.name}:{node.lineno} .{node.attr}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr in names
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]


def test_the_builder_is_used_through_its_public_protocol_only() -> None:
    """Streams, PyFlink's module names and other front ends write programs with
    ``new_id()``, ``add_operator()``, ``declare_type()``, ``declared_type()`` and ``dialect``;
    no module but the environment's own touches its private members."""
    names = _private_members_of_the_environment()
    assert {"_new_id", "_add_operator", "_declare_type", "_pyflink_api", "_types"} & names == {"_types"}
    uses = [
        use for path in PACKAGE.rglob("*.py") if path.name != "environment.py" for use in _private_uses(path, names)
    ]
    assert uses == []


def test_the_private_use_check_finds_a_planted_one(tmp_path: Path) -> None:
    module = tmp_path / "planted.py"
    module.write_text("def f(stream):\n    return stream._env._types, self._types\n")
    assert _private_uses(module, _private_members_of_the_environment()) == ["planted.py:2 ._types"]


def test_a_second_front_end_writes_a_program_with_the_builder_protocol() -> None:
    from flowmagic import datastream as pyflink_datastream
    from flowmagic.api.datastream import DataStream
    from flowmagic.graph.operator_params import FunctionParams
    from flowmagic.graph.operators import OperatorKind, OperatorSpec
    from flowmagic.graph.transformations import OneInputTransformation
    from flowmagic.vocabulary.dialect import JAVA, PYFLINK

    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    source = env.from_collection([1, 2, 3])
    doubled = OneInputTransformation(
        id=env.new_id(),
        name="Twice",
        parallelism=1,
        inputs=[source.transformation],
        operator=OperatorSpec(OperatorKind.MAP, FunctionParams(function=lambda x: 2 * x)),
    )
    env.add_operator(doubled)
    env.declare_type(doubled, flowmagic.Types.LONG())
    assert env.declared_type(doubled) == flowmagic.Types.LONG()
    assert env.dialect is JAVA and pyflink_datastream.StreamExecutionEnvironment.dialect is PYFLINK
    assert sorted(DataStream(env, doubled).execute_and_collect(executor="local")) == [2, 4, 6]
    assert [node.name for node in env.get_stream_graph().nodes.values()][:2] == [
        "Source: Collection Source",
        "Twice",
    ]
