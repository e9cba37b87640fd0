"""IPython magics: ``%%flow NAME`` defines a pipeline; ``%flow list|show|explain|run|cancel|stop|check`` use it.

``%load_ext flowmagic`` registers them; ``%flow?`` prints the options.

How a ``%%flow NAME`` cell runs
-------------------------------
The body runs in the user's namespace, like any cell: it sees the notebook's variables and
functions, and what it defines stays defined. Two names are provided:

* every name of ``flowmagic.__all__`` the user has not bound already (the user's own
  binding wins). They stay, hidden from ``%who``, because functions defined in the cell may
  use them later, when the pipeline runs;
* ``env``: a fresh :class:`~flowmagic.StreamExecutionEnvironment` configured by the options.
  It is the cell's alone: afterwards ``env`` is what it was before the cell (or unbound),
  and the pipeline's environment is ``NAME.env``. A cell that binds ``env`` to another
  environment (``env = StreamExecutionEnvironment()``) defines the pipeline on that one.

The graphs are built when the cell ends, and ``NAME`` is bound to a :class:`Pipeline`.
Mistakes are reported briefly: bad options and graph errors (such as ``forward()`` between
different parallelisms) as a one-line ``UsageError``, errors raised by the cell's code as
its traceback with the cell's lines. A failed cell changes no pipeline and no binding
except what its own code assigned before failing.

Line commands are entries of :data:`SUBCOMMANDS` (a parser and a :class:`FlowMagics`
method name), so that more can be added next to ``list``, ``show`` and ``explain``.
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import difflib
import html
import json
import keyword
import linecache
import os
import shlex
import sys
import threading
import traceback
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import MagicArgumentParser, argument, kwds, magic_arguments, parse_argstring
from IPython.display import display

import flowmagic
from flowmagic.api.environment import ProgramWatch, StreamExecutionEnvironment, watch_programs
from flowmagic.api.pyflink_imports import imports_pyflink, installed_pyflink, pyflink_imports
from flowmagic.errors import FlowError
from flowmagic.executors import EXECUTORS
from flowmagic.pipeline import Pipeline
from flowmagic.render import GraphvizError, layout, to_dot
from flowmagic.runtime import JobResult
from flowmagic.runtime.continuous.job import ContinuousJob
from flowmagic.sql_pipeline import SqlPipeline
from flowmagic.widgets.graph_view import LEVELS, GraphPicture
from flowmagic.widgets.restore_check import RestoreCheckView
from flowmagic.widgets.sql_plans import retraction_html

__all__ = ["SUBCOMMANDS", "FlowMagics", "Subcommand", "load_ipython_extension"]

_SHOW_CHOICES = (*LEVELS, "all", "none")
_FORMATS = {".svg": "svg", ".dot": "dot", ".gv": "dot", ".json": "json"}
_TASKMANAGERS_HELP = "TaskManagers of the physical graph's cluster (default: 1, as a local environment)"
_SLOTS_HELP = "slots per TaskManager, Flink's taskmanager.numberOfTaskSlots (default: enough for the widest vertex)"


@dataclass(frozen=True)
class Subcommand:
    """A ``%flow COMMAND ...`` line command: its argument parser and the handler's name.

    The handler is a :class:`FlowMagics` method taking the parsed arguments.
    """

    parser: MagicArgumentParser
    handler: str


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _parser(command: str, description: str) -> MagicArgumentParser:
    # IPython's help formatter puts the "%" in front of the program name.
    return MagicArgumentParser(prog=f"flow {command}", description=description)


def _list_parser() -> MagicArgumentParser:
    return _parser("list", "A table of the pipelines defined so far.")


def _show_parser() -> MagicArgumentParser:
    parser = _parser(
        "show",
        "Show a pipeline's graphs: the widget, or one level as SVG, DOT or JSON (printed or written to a file).",
    )
    parser.add_argument("name", metavar="NAME", help="the pipeline")
    parser.add_argument("--level", choices=tuple(LEVELS), help="one graph only (default: all; job with --format)")
    parser.add_argument("--format", choices=("svg", "dot", "json"), help="output this format instead of the widget")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE (format from its extension if not given)")
    parser.add_argument("--taskmanagers", type=_positive_int, metavar="N", help=_TASKMANAGERS_HELP)
    parser.add_argument("--slots-per-taskmanager", type=_positive_int, metavar="M", help=_SLOTS_HELP)
    return parser


def _explain_parser() -> MagicArgumentParser:
    parser = _parser(
        "explain",
        "The StreamGraph, the JobGraph with its chains and ship strategies, and a summary "
        "of the ExecutionGraph, as text.",
    )
    parser.add_argument("name", metavar="NAME", help="the pipeline")
    parser.add_argument(
        "--changelog",
        action="store_true",
        help="of a SQL pipeline: why its result retracts (the plan node that first emits updates or deletes, what "
        "the sink takes, the rewrites that avoid them) and the EXPLAIN CHANGELOG_MODE plan it is read from",
    )
    return parser


def _run_parser() -> MagicArgumentParser:
    parser = _parser(
        "run",
        "Run a pipeline on Spark with live per-subtask metrics; print sinks' lines follow. Interrupt the "
        "kernel (or %flow cancel NAME from another thread) to cancel. A pipeline with an unbounded source "
        "starts in the background (a continuous job): the view keeps updating; %flow stop or %flow cancel ends it.",
    )
    parser.add_argument("name", metavar="NAME", help="the pipeline")
    parser.add_argument("--spark", metavar="VAR", help="the SparkSession variable to run on (default: the active one)")
    parser.add_argument(
        "-p", "--parallelism", type=_positive_int, metavar="N", help="run operators without their own parallelism at N"
    )
    parser.add_argument("--mode", choices=("streaming", "batch"), help="the runtime execution mode for this run")
    parser.add_argument("--background", action="store_true", help="return at once; the view keeps updating")
    parser.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="spark",
        help="where to run: spark (default) or local, this Python process (no JVM)",
    )
    parser.add_argument("--from-savepoint", metavar="DIR", help="restore an unbounded job's state from a savepoint")
    parser.add_argument(
        "--allow-non-restored-state",
        action="store_true",
        help="skip savepoint state of operators the pipeline no longer has",
    )
    return parser


def _cancel_parser() -> MagicArgumentParser:
    parser = _parser("cancel", "Cancel every run of a pipeline under way (background runs and unbounded jobs).")
    parser.add_argument("name", metavar="NAME", help="the pipeline")
    return parser


def _stop_parser() -> MagicArgumentParser:
    parser = _parser("stop", "Stop a pipeline's unbounded job with a savepoint (Flink's stop-with-savepoint).")
    parser.add_argument("name", metavar="NAME", help="the pipeline")
    parser.add_argument("--savepoint", metavar="DIR", required=True, help="the directory to write the savepoint to")
    return parser


def _check_parser() -> MagicArgumentParser:
    parser = _parser(
        "check",
        "Check, before restoring, what a savepoint (or retained checkpoint chk-N) restores into the pipeline: "
        "per operator restored, new (starts empty), missing (needs --allow-non-restored-state) or incompatible "
        "(refused), drawn on the JobGraph. Nothing runs; the savepoint is verified as a restore verifies it.",
    )
    parser.add_argument("name", metavar="NAME", help="the pipeline")
    parser.add_argument("--savepoint", metavar="DIR", required=True, help="the savepoint or retained checkpoint")
    parser.add_argument(
        "--allow-non-restored-state",
        action="store_true",
        help="as %%flow run: state of operators the pipeline no longer has is dropped, not refused",
    )
    parser.add_argument(
        "-p", "--parallelism", type=_positive_int, metavar="N", help="check a restore at parallelism N (%%flow run -p)"
    )
    parser.add_argument("--spark", metavar="VAR", help="the SparkSession whose S3A settings reach an s3a:// path")
    return parser


#: The ``%flow`` line commands, by name.
SUBCOMMANDS: dict[str, Subcommand] = {
    "list": Subcommand(_list_parser(), "list_pipelines"),
    "show": Subcommand(_show_parser(), "show_pipeline"),
    "explain": Subcommand(_explain_parser(), "explain_pipeline"),
    "run": Subcommand(_run_parser(), "run_pipeline"),
    "cancel": Subcommand(_cancel_parser(), "cancel_pipeline"),
    "stop": Subcommand(_stop_parser(), "stop_pipeline"),
    "check": Subcommand(_check_parser(), "check_restore"),
}


def _line_usage() -> str:
    # IPython's help formatter writes usage as a wrapped reStructuredText literal block ("::").
    return "\n".join(
        " ".join(word for word in subcommand.parser.format_usage().split() if word != "::")
        for subcommand in SUBCOMMANDS.values()
    )


def _check_name(name: str) -> None:
    if not name.isidentifier() or keyword.iskeyword(name):
        raise UsageError(f"%%flow: the pipeline name must be a Python identifier (it is bound to it), got {name!r}.")
    if name == "env" or hasattr(builtins, name):
        raise UsageError(f"%%flow: {name!r} would hide the cell's `env` or a Python builtin; choose another name.")


def _cell_program(watch: ProgramWatch, final: Any, default: StreamExecutionEnvironment) -> StreamExecutionEnvironment:
    """The environment holding the cell's pipeline: the program the cell last executed (a
    whole PyFlink program runs itself, and its environment then forgets it), else the one
    ``env`` names at the end, else the last one the cell made and built a program on."""
    if watch.executed:
        return watch.executed[-1]
    if isinstance(final, StreamExecutionEnvironment) and final.transformations:
        return final
    for made in reversed(watch.created):
        if made.transformations:
            return made
    return final if isinstance(final, StreamExecutionEnvironment) else default


def _cell_filename(name: str) -> str:
    return f"<flow-cell {name}>"


@magics_class
class FlowMagics(Magics):
    """The ``%flow`` / ``%%flow`` magics and the pipelines they defined, by name."""

    def __init__(self, shell: Any):
        super().__init__(shell)
        self.pipelines: dict[str, Pipeline] = {}
        # IPython registers magics with the shell that runs them, so it is never None here.
        self.ipython: Any = shell

    @line_cell_magic
    @magic_arguments(name="%flow")
    @kwds(epilog="line commands:\n" + "\n".join(f"  {usage}" for usage in _line_usage().splitlines()))
    @argument("name", metavar="NAME", help="the pipeline's name: the job name, and the variable bound to it")
    @argument("-p", "--parallelism", type=_positive_int, metavar="N", help="the default parallelism of `env`")
    @argument("--max-parallelism", type=_positive_int, metavar="N", help="the job's max parallelism")
    @argument("--no-chaining", action="store_true", help="disable operator chaining")
    @argument("--mode", choices=("streaming", "batch"), help="the runtime execution mode (default: streaming)")
    @argument("--show", choices=_SHOW_CHOICES, default="all", help="which graphs to show (default: all, in tabs)")
    @argument("--slots-per-taskmanager", type=_positive_int, metavar="M", help=_SLOTS_HELP)
    @argument("--taskmanagers", type=_positive_int, metavar="N", help=_TASKMANAGERS_HELP)
    @argument(
        "--sql",
        action="store_true",
        help="the cell is Flink SQL: DDL and SET statements, then one query or INSERT INTO",
    )
    def flow(self, line: str, cell: str | None = None) -> Any:
        """Define a Flink-style DataStream pipeline and draw its StreamGraph, JobGraph, ExecutionGraph
        and physical graph (its subtasks in the slots of --taskmanagers N TaskManagers of
        --slots-per-taskmanager M slots).

        The cell body builds the pipeline on `env`, a fresh StreamExecutionEnvironment, with
        every flowmagic name (WatermarkStrategy, Time, ...) available. NAME is then bound to
        the pipeline (.env, .stream_graph, .job_graph, .execution_graph, .physical_graph, .show(),
        .explain()).
        """
        __tracebackhide__ = True  # IPython hides this frame when a cell's error is shown.
        if cell is None:
            return self._line_command(line)
        return self._define(parse_argstring(self.flow, line), cell)

    # -- %%flow NAME ---------------------------------------------------------------------

    def _define(self, args: argparse.Namespace, cell: str) -> None:
        __tracebackhide__ = True
        name = args.name
        _check_name(name)
        if args.sql:
            return self._define_sql(args, cell)
        env = StreamExecutionEnvironment()
        try:
            if args.parallelism is not None:
                env.set_parallelism(args.parallelism)
            if args.max_parallelism is not None:
                env.set_max_parallelism(args.max_parallelism)
            if args.no_chaining:
                env.disable_operator_chaining()
            if args.mode is not None:
                env.set_runtime_mode(args.mode)
        except FlowError as error:
            raise UsageError(f"%%flow {name}: {_error_text(error)}") from None
        env = self._run_cell(name, cell, env)
        if not env.transformations:
            raise UsageError(
                f"%%flow {name}: the cell defines no operators. Build the pipeline on `env`, "
                "e.g. env.from_collection([1, 2, 3]).map(lambda x: x * 2).print()"
            )
        try:
            pipeline = Pipeline(
                name, env, taskmanagers=args.taskmanagers, slots_per_taskmanager=args.slots_per_taskmanager
            )
        except FlowError as error:
            # The message names the operator and the cell line that created it.
            raise UsageError(f"%%flow {name}: {type(error).__name__}: {_error_text(error)}") from None
        self.pipelines[name] = pipeline
        self.ipython.user_ns[name] = pipeline
        if args.show != "none":
            with _drawing(f"%%flow {name}: the pipeline is defined, but"):
                view = pipeline.show(args.show).draw()
            display(view)

    def _define_sql(self, args: argparse.Namespace, cell: str) -> None:
        """``%%flow NAME --sql``: plan the cell's statements and bind NAME to their pipeline."""
        __tracebackhide__ = True
        name = args.name
        try:
            pipeline = SqlPipeline(
                name,
                cell,
                mode=args.mode,
                parallelism=args.parallelism,
                taskmanagers=args.taskmanagers,
                slots_per_taskmanager=args.slots_per_taskmanager,
            )
        except FlowError as error:
            raise UsageError(f"%%flow {name}: {type(error).__name__}: {_error_text(error)}") from None
        self.pipelines[name] = pipeline
        self.ipython.user_ns[name] = pipeline
        if args.show != "none":
            with _drawing(f"%%flow {name}: the pipeline is defined, but"):
                view = pipeline.show(args.show).draw()
            display(view)

    def _run_cell(self, name: str, cell: str, env: StreamExecutionEnvironment) -> StreamExecutionEnvironment:
        """Run the cell body with ``env``; return the environment ``env`` names at its end."""
        __tracebackhide__ = True
        filename = _cell_filename(name)
        # Tracebacks and call sites then show the cell's own lines.
        linecache.cache[filename] = (len(cell), None, cell.splitlines(keepends=True), filename)
        try:
            code = compile(cell, filename, "exec")
        except SyntaxError as error:
            detail = "".join(traceback.format_exception_only(error)).rstrip()
            raise UsageError(f"%%flow {name}: the cell is not valid Python:\n{detail}") from None
        pyflink = imports_pyflink(cell)
        installed = installed_pyflink() if pyflink else None
        if installed is not None:
            raise UsageError(
                f"%%flow {name}: the cell imports pyflink, and PyFlink is installed in this kernel ({installed}): "
                "its imports would build a job for real Flink, not a flowmagic pipeline, so flowmagic leaves them "
                "alone. Replace `pyflink` with `flowmagic` in the cell's imports (flowmagic.datastream, "
                "flowmagic.common ...), or use a kernel without apache-flink."
            )
        namespace = self.ipython.user_ns
        self.ipython.push(
            {dsl: getattr(flowmagic, dsl) for dsl in flowmagic.__all__ if dsl not in namespace}, interactive=False
        )
        missing = object()
        saved = namespace.get("env", missing)
        namespace["env"] = env
        with watch_programs() as watch:
            try:
                with pyflink_imports() if pyflink else contextlib.nullcontext():
                    exec(code, namespace)
            except FlowError as error:
                raise UsageError(_flow_error_message(name, error)) from None
            except Exception as error:
                # Re-raising the same exception keeps its context (what the user's code was handling).
                raise _without_internal_frames(error)  # noqa: B904
            finally:
                final = namespace.pop("env", None)
                if saved is not missing:
                    namespace["env"] = saved
        return _cell_program(watch, final, env)

    # -- %flow COMMAND ... ---------------------------------------------------------------

    def _line_command(self, line: str) -> Any:
        command, _, rest = line.strip().partition(" ")
        if command in ("", "help", "-h", "--help"):
            print(f"{_line_usage()}\n\n%%flow NAME [options] defines a pipeline: see %flow? for the options.")
            return None
        subcommand = SUBCOMMANDS.get(command)
        if subcommand is None:
            close = difflib.get_close_matches(command, SUBCOMMANDS, n=1)
            hint = f" Did you mean %flow {close[0]}?" if close else ""
            if command.isidentifier():
                hint += f" To define a pipeline, use the cell magic: %%flow {command}"
            raise UsageError(f"%flow: unknown command {command!r}; use one of {', '.join(SUBCOMMANDS)}.{hint}")
        try:
            # POSIX quoting, so that "-o 'my graph.svg'" names a file with a space.
            argv = shlex.split(rest)
        except ValueError as error:
            raise UsageError(f"%flow {command}: {error}.") from None
        if argv in (["-h"], ["--help"]):
            print(subcommand.parser.format_help())
            return None
        return getattr(self, subcommand.handler)(subcommand.parser.parse_args(argv))

    def _pipeline(self, name: str) -> Pipeline:
        try:
            return self.pipelines[name]
        except KeyError:
            defined = ", ".join(self.pipelines) or "none yet"
            raise UsageError(f"%flow: no pipeline named {name!r} (defined: {defined}).") from None

    def _spark(self, variable: str | None, command: str) -> Any:
        """The SparkSession the variable ``variable`` holds (None: none named)."""
        if variable is None:
            return None
        if variable not in self.ipython.user_ns:
            raise UsageError(f"%flow {command}: no variable named {variable!r} holds a SparkSession.")
        return self.ipython.user_ns[variable]

    def list_pipelines(self, args: argparse.Namespace) -> PipelineTable:
        """``%flow list``: a table of the pipelines."""
        return PipelineTable(list(self.pipelines.values()))

    def show_pipeline(self, args: argparse.Namespace) -> Any:
        """``%flow show NAME``: the widget, or one level as SVG/DOT/JSON, shown or written to a file."""
        pipeline = self._pipeline(args.name)
        physical = pipeline.physical_graph
        if args.taskmanagers is not None or args.slots_per_taskmanager is not None:
            physical = pipeline.deploy(args.taskmanagers, args.slots_per_taskmanager)
        output_format = args.format
        if output_format is None and args.output is not None:
            output_format = _FORMATS.get(Path(args.output).suffix.lower())
            if output_format is None:
                raise UsageError(f"%flow show: cannot tell the format of {args.output!r}; give --format svg|dot|json.")
        if output_format is None:
            with _drawing("%flow show:"):
                return pipeline.show(args.level or "all", physical_graph=physical).draw()
        level = args.level or "job"
        graph = physical if level == "physical" else pipeline.graph(level)
        if output_format == "json":
            text = json.dumps(graph.to_dict(), indent=2, ensure_ascii=False) + "\n"
        elif output_format == "dot":
            text = to_dot(graph).source
        else:
            with _drawing("%flow show:"):
                text = pipeline.show(level, physical_graph=physical).svg(level)
        if args.output is not None:
            try:
                Path(args.output).write_text(text, encoding="utf-8")
            except OSError as error:
                raise UsageError(f"%flow show: cannot write {args.output!r}: {error.strerror}.") from None
            print(f"Wrote the {LEVELS[level]} of {pipeline.name!r} to {args.output} ({output_format}).")
            return None
        if output_format == "svg":
            return GraphPicture(text, f"{LEVELS[level]} of {pipeline.name}")
        print(text, end="")
        return None

    def run_pipeline(self, args: argparse.Namespace) -> JobResult | None:
        """``%flow run NAME``: run on Spark with the live view; errors are short messages."""
        pipeline = self._pipeline(args.name)
        spark = self._spark(args.spark, "run")
        options = {"spark": spark, "parallelism": args.parallelism, "mode": args.mode, "executor": args.executor}
        if args.from_savepoint is not None or args.allow_non_restored_state:
            options.update(from_savepoint=args.from_savepoint, allow_non_restored_state=args.allow_non_restored_state)
        if pipeline.is_unbounded:
            try:
                job = pipeline.run(**options)
            except FlowError as error:
                raise UsageError(f"%flow run {pipeline.name}: {_error_text(error)}") from None
            assert isinstance(job, ContinuousJob)
            print(
                f"Job {pipeline.name!r} ({job.get_job_id()}) runs in the background. End it with "
                f"%flow stop {pipeline.name} --savepoint DIR, or %flow cancel {pipeline.name}."
            )
            return None
        if args.background:
            worker = threading.Thread(target=self._run_in_background, args=(pipeline, options), daemon=True)
            worker.start()
            return None
        try:
            pipeline.run(**options)
        except FlowError as error:
            raise UsageError(f"%flow run {pipeline.name}: {_error_text(error)}") from None
        return None

    @staticmethod
    def _run_in_background(pipeline: Pipeline, options: dict[str, Any]) -> None:
        try:
            pipeline.run(**options)
        except FlowError as error:
            print(f"%flow run {pipeline.name}: {_error_text(error)}", file=sys.stderr)

    def cancel_pipeline(self, args: argparse.Namespace) -> None:
        """``%flow cancel NAME``: cancel every run of it under way."""
        pipeline = self._pipeline(args.name)
        jobs = pipeline.jobs
        try:
            count = pipeline.cancel()
        except FlowError as error:
            raise UsageError(f"%flow cancel {pipeline.name}: {_error_text(error)}") from None
        if count == 0:
            raise UsageError(f"%flow cancel: {pipeline.name!r} has no running job.")
        print(f"Cancelled {count} run{'s' if count > 1 else ''} of {pipeline.name!r}.")
        for job in jobs:
            if job.cancel_details is not None:
                print(f"Job {job.get_job_id()}: {job.cancel_details}.")

    def stop_pipeline(self, args: argparse.Namespace) -> None:
        """``%flow stop NAME --savepoint DIR``: stop its unbounded job with a savepoint."""
        pipeline = self._pipeline(args.name)
        try:
            paths = pipeline.stop(args.savepoint)
        except FlowError as error:
            raise UsageError(f"%flow stop {pipeline.name}: {_error_text(error)}") from None
        for path in paths:
            # Flink's CLI says the same after stop-with-savepoint.
            print(f"Savepoint completed. Path: file:{os.path.abspath(path)}")

    def check_restore(self, args: argparse.Namespace) -> RestoreCheckView:
        """``%flow check NAME --savepoint DIR``: every operator's verdict, on the JobGraph."""
        pipeline = self._pipeline(args.name)
        spark = self._spark(args.spark, "check")
        try:
            job_graph, _execution_graph = pipeline.compiled(args.parallelism)
            check = pipeline.check_restore(
                args.savepoint,
                allow_non_restored_state=args.allow_non_restored_state,
                parallelism=args.parallelism,
                spark=spark,
            )
        except FlowError as error:
            raise UsageError(f"%flow check {pipeline.name}: {type(error).__name__}: {_error_text(error)}") from None
        view = RestoreCheckView(job_graph, check)
        with _drawing(f"%flow check {pipeline.name}:"):
            view.svg()
        return view

    def explain_pipeline(self, args: argparse.Namespace) -> None:
        """``%flow explain NAME``: the three graphs (a SQL pipeline: Flink's EXPLAIN) as text;
        ``--changelog``: why a SQL pipeline's result retracts, as text and HTML."""
        pipeline = self._pipeline(args.name)
        if not args.changelog:
            print(pipeline.explain(), end="")
            return
        if not isinstance(pipeline, SqlPipeline):
            raise UsageError(
                f"%flow explain --changelog: {pipeline.name!r} is a DataStream pipeline; its records carry no "
                "row kinds. Define a SQL pipeline with %%flow NAME --sql."
            )
        text = pipeline.explain_changelog()
        physical = html.escape(text.split("\n\n== Optimized Physical Plan (CHANGELOG_MODE) ==\n", 1)[1])
        page = (
            f"{retraction_html(pipeline.retraction)}<p><b>Optimized Physical Plan (CHANGELOG_MODE)</b></p>"
            f'<pre class="tex2jax_ignore mathjax_ignore">{physical}</pre>'
        )
        display({"text/plain": str(text), "text/html": page}, raw=True)


class PipelineTable:
    """The ``%flow list`` table, as text and as HTML."""

    columns = ("Pipeline", "Mode", "Operators", "Job vertices", "Subtasks", "Parallelism", "Status")

    def __init__(self, pipelines: list[Pipeline]):
        self.rows = [
            (
                pipeline.name,
                pipeline.stream_graph.job_type,
                str(len(pipeline.stream_graph.nodes)),
                str(len(pipeline.job_graph.vertices)),
                str(pipeline.execution_graph.num_subtasks),
                _parallelism_range(pipeline),
                pipeline.status(),
            )
            for pipeline in pipelines
        ]

    def __repr__(self) -> str:
        if not self.rows:
            return "No pipelines defined yet: define one with %%flow NAME."
        widths = [max(len(row[column]) for row in [self.columns, *self.rows]) for column in range(len(self.columns))]
        lines = [
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in [self.columns, *self.rows]
        ]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        if not self.rows:
            return f"<p>{html.escape(repr(self))}</p>"
        head = "".join(f"<th>{html.escape(cell)}</th>" for cell in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in self.rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


@contextlib.contextmanager
def _drawing(context: str) -> Iterator[None]:
    """Report a Graphviz that is missing or failing as a short message with the install hint."""
    try:
        yield
    except GraphvizError as error:
        raise UsageError(f"{context} it cannot be drawn: {_error_text(error)}") from None


def _parallelism_range(pipeline: Pipeline) -> str:
    values = sorted({vertex.parallelism for vertex in pipeline.execution_graph.vertices.values()})
    return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


def _flow_error_message(name: str, error: FlowError) -> str:
    """``%%flow NAME, line L: ErrorClass: message`` and the line's text, from the traceback."""
    filename = _cell_filename(name)
    lineno = None
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    where = f"%%flow {name}"
    if lineno is not None:
        text = linecache.getline(filename, lineno).strip()
        return f"{where}, line {lineno}: {type(error).__name__}: {_error_text(error)}\n    {text}"
    return f"{where}: {type(error).__name__}: {_error_text(error)}"


def _error_text(error: BaseException) -> str:
    """The error's message, then its causes as Flink's client prints a chained exception
    (``Caused by: Class: message``), then the notes (what flowmagic offers instead)."""
    lines = [str(error)]
    notes = list(getattr(error, "__notes__", ()))
    cause = error.__cause__
    while cause is not None:
        lines.append(f"Caused by: {type(cause).__name__}: {cause}")
        # A wrapping error may carry its cause's notes already: print each once.
        notes += [note for note in getattr(cause, "__notes__", ()) if note not in notes]
        cause = cause.__cause__
    return "\n".join(lines + notes)


def _without_internal_frames(error: Exception) -> Exception:
    """``error`` with a traceback of the user's frames only: from the cell on, minus flowmagic's."""
    kept = []
    tb = error.__traceback__.tb_next if error.__traceback__ is not None else None  # Skip _run_cell's exec.
    while tb is not None:
        if not tb.tb_frame.f_globals.get("__name__", "").startswith("flowmagic."):
            kept.append(tb)
        tb = tb.tb_next
    trimmed = None
    for tb in reversed(kept):
        trimmed = types.TracebackType(trimmed, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return error.with_traceback(trimmed)


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics (``%load_ext flowmagic``) and start Graphviz in the background."""
    ipython.register_magics(FlowMagics)
    layout.warm_up()
