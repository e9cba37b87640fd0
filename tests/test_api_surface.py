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
            "AggregateFunction", "CoFlatMapFunction", "CoMapFunction", "CoProcessFunction", "CountEvictor",
            "CountTrigger", "Duration", "Encoder", "EventTimeSessionWindows", "FileSink", "FilterFunction",
            "FlatMapFunction", "FlowError", "GlobalWindows", "KeySelector", "KeyedCoProcessFunction",
            "ListStateDescriptor", "MapStateDescriptor", "ValueStateDescriptor",
            "KeyedProcessFunction", "MapFunction", "OutputTag", "Partitioner", "ProcessFunction",
            "ProcessWindowFunction", "ProcessingTimeSessionWindows", "PurgingTrigger", "ReduceFunction",
            "RuntimeExecutionMode", "SinkFunction", "SlidingEventTimeWindows", "SlidingProcessingTimeWindows",
            "StreamExecutionEnvironment", "Time", "TumblingEventTimeWindows", "TumblingProcessingTimeWindows",
            "WatermarkStrategy", "WindowFunction", "assign_key_to_parallel_operator", "assign_to_key_group",
            "compute_default_max_parallelism",
        ]
    )  # fmt: skip
    for name in flowmagic.__all__:
        assert getattr(flowmagic, name) is not None


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


_LAYERS = {"graph": 0, "compile": 1, "api": 2, "render": 3, "runtime": 3, "widgets": 4, "magics": 5}


def _module_imports(path: Path) -> list[str]:
    """Modules imported at module level (lazy imports inside functions are deliberate facades)."""
    tree = ast.parse(path.read_text())
    names = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def test_layers_import_downward_only() -> None:
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).parts
        layer = relative[0].removesuffix(".py")
        if layer not in _LAYERS:
            continue
        for module in _module_imports(path):
            if not module.startswith("flowmagic."):
                continue
            target = module.split(".")[1]
            if target in _LAYERS and target != layer:
                assert _LAYERS[target] < _LAYERS[layer], f"{path.relative_to(PACKAGE)} imports {module}"


def test_the_engine_does_not_load_ipython_or_pyspark() -> None:
    code = (
        "import sys, flowmagic\n"
        "env = flowmagic.StreamExecutionEnvironment(); env.from_sequence(1, 3).print(); env.get_execution_graph()\n"
        "print(sorted(m for m in ('IPython', 'pyspark', 'ipywidgets') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
