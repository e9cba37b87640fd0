"""Whether a savepoint restores into a program: every operator's verdict, before anything runs.

Flink finds out what of a savepoint an edited program can take one failure at a time: the
job manager refuses state of an operator the program no longer has, or a changed max
parallelism; then a task refuses a state registered with another type. The check here
compares the savepoint's manifest (per operator ID: its parallelism, max parallelism, the
keyed states it declared, a source's position) with the program's JobGraph and the states
its keyed operators declare when opened (:mod:`flowmagic.runtime.declared_states`), and gives
every operator's verdict at once:

* **restored**: its state goes to the operator with its ID (key groups re-split over a new
  parallelism, up to the max parallelism, as in Flink);
* **new**: a stateful operator the savepoint has no state of: it starts empty;
* **missing**: savepoint state of an operator the program does not have: refused, in Flink's
  words, unless non-restored state is allowed (``--allow-non-restored-state``,
  ``execution.savepoint.ignore-unclaimed-state``), which drops it;
* **incompatible**: refused, with the text the restore gives: a keyed state declared with
  another kind or type, a changed max parallelism, a source of another kind;
* **no state**: neither the savepoint nor the operator has any.

A job restoring from a savepoint runs the same check first and refuses with its first
problem's text followed by the whole list (:meth:`RestoreCheck.error`). The comparison
(:func:`compare_restore`) reads plain data only; reading the savepoint
(:func:`read_snapshot`) checks its manifest's signature and paths as every restore does, and
nothing of it is unpickled.
"""

from __future__ import annotations

import enum
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from flowmagic.errors import JobError, JobFailedError, NonRestoredStateError
from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.runtime.continuous.state_store import (
    MANIFEST,
    Manifest,
    OperatorState,
    StateDeclaration,
    read_manifest,
    verify_snapshot,
)
from flowmagic.runtime.continuous.storage import Storage, s3a_options
from flowmagic.runtime.declared_states import Declared, declared_states
from flowmagic.runtime.plan import VertexPlan, build_plans
from flowmagic.runtime.state.keyed_state import incompatibility

__all__ = [
    "OperatorCheck",
    "ProgramOperator",
    "RestoreCheck",
    "StateCheck",
    "Verdict",
    "check_restore",
    "compare_restore",
    "program_operators",
    "read_snapshot",
]


class Verdict(enum.StrEnum):
    """What a restore does with an operator's state."""

    RESTORED = "restored"
    NEW = "new"
    MISSING = "missing"
    INCOMPATIBLE = "incompatible"
    STATELESS = "no state"


@dataclass(frozen=True)
class ProgramOperator:
    """An operator of the program to restore into, as the check needs it."""

    operator_id: str
    name: str
    vertex_id: str
    parallelism: int
    max_parallelism: int
    #: Whether the program set the max parallelism (else it is derived from the parallelism).
    max_parallelism_configured: bool
    #: A source's kind (its operator kind's value); None for other operators.
    source_kind: str | None = None
    #: A keyed operator's declared states (None: it has no keyed state).
    declared: Declared | None = None


@dataclass(frozen=True)
class StateCheck:
    """One keyed state by name: as the savepoint and the program declare it."""

    name: str
    saved: StateDeclaration | None
    declared: tuple[str, str | None] | None
    problem: str | None = None

    def text(self) -> str:
        """The state, how each side declares it, and what a restore does with it."""

        def kind(declaration: tuple[str, str | None]) -> str:
            return declaration[0] if declaration[1] is None else f"{declaration[0]} of {declaration[1]}"

        saved = None if self.saved is None else (self.saved.kind, self.saved.type_info)
        if saved is not None and self.declared is not None:
            if self.problem is not None:
                return f"state {self.name!r}: {kind(saved)} in the savepoint, {kind(self.declared)} in the program"
            return f"state {self.name!r}: {kind(saved)}, restored"
        if saved is not None:
            return f"state {self.name!r}: {kind(saved)}, restored (not declared when the program's functions open)"
        assert self.declared is not None
        return f"state {self.name!r}: {kind(self.declared)}, new: starts empty"


@dataclass(frozen=True)
class OperatorCheck:
    """One operator's verdict: its keyed states, the refusals (``problems``, in the restore's
    words) and what else a restore does with it (``notes``)."""

    operator_id: str
    verdict: Verdict
    #: Its name in the program (None: the program has no operator with this ID).
    name: str | None = None
    vertex_id: str | None = None
    states: tuple[StateCheck, ...] = ()
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.name if self.name is not None else "(no operator in the program)"

    def details(self) -> list[str]:
        """Its states, refusals and notes, one per line."""
        return [*(state.text() for state in self.states), *self.problems, *self.notes]


@dataclass(frozen=True)
class RestoreCheck:
    """Every operator's verdict for restoring ``savepoint_path`` into the job ``job_name``."""

    savepoint_path: str
    job_name: str
    allow_non_restored_state: bool
    operators: tuple[OperatorCheck, ...]

    def of(self, verdict: Verdict) -> list[OperatorCheck]:
        """The operators with ``verdict``."""
        return [operator for operator in self.operators if operator.verdict is verdict]

    @property
    def refused(self) -> bool:
        """Whether a job restoring from the savepoint would be refused."""
        return any(operator.problems for operator in self.operators)

    def error(self) -> JobError | None:
        """What a restore raises (None: it restores): the refusal Flink meets first (state
        without an operator, a changed max parallelism, then a source or a keyed state of
        another kind), its text followed by every operator's verdict."""
        refusals: list[tuple[int, OperatorCheck, str]] = []
        for operator in self.operators:
            for problem in operator.problems:
                refusals.append((_refusal_order(operator, problem), operator, problem))
        if not refusals:
            return None
        _order, operator, problem = min(refusals, key=lambda refusal: refusal[0])
        message = f"{problem}\n\n{self.to_text()}"
        if operator.verdict is Verdict.MISSING:
            return NonRestoredStateError(message)
        if problem.startswith(_MAX_PARALLELISM) or problem.startswith(_SOURCE):
            return JobError(message)
        return JobFailedError(
            message,
            {
                "summary": f"{problem} -- in operator {operator.label!r}",
                "operator": operator.label,
                "exception": f"IncompatibleStateError: {problem}",
            },
        )

    def raise_if_refused(self) -> None:
        """Raise :meth:`error`, if a restore would be refused."""
        error = self.error()
        if error is not None:
            raise error

    def summary(self) -> str:
        """One line: the savepoint, the job, whether it restores, and how many of each verdict."""
        counts = [
            f"{len(operators)} {verdict.value}"
            for verdict in Verdict
            if (operators := self.of(verdict)) and verdict is not Verdict.STATELESS
        ]
        outcome = "refused" if self.refused else "restores"
        return (
            f"Restoring {self.savepoint_path} into {self.job_name!r}: {outcome} "
            f"({', '.join(counts) if counts else 'no state'})"
        )

    def to_text(self) -> str:
        """The verdicts as text: one operator a line, its details indented under it."""
        lines = [self.summary()]
        width = max(len(verdict.value) for verdict in Verdict)
        for operator in self.operators:
            lines.append(f"  {operator.verdict.value.ljust(width)}  {operator.label}  [{operator.operator_id}]")
            lines.extend(f"  {'':{width}}    {detail}" for detail in operator.details())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.to_text())


_MAX_PARALLELISM = "Failed to rollback to checkpoint/savepoint"
_SOURCE = "Cannot restore the source"


def _refusal_order(operator: OperatorCheck, problem: str) -> int:
    # Flink's job manager refuses missing operators and max parallelism when it loads the
    # savepoint; sources and keyed states are refused when the tasks restore.
    if problem.startswith(_MAX_PARALLELISM):
        return 0
    return 1 if problem.startswith(_SOURCE) else 2


def compare_restore(
    manifest: Manifest,
    program: Iterable[ProgramOperator],
    savepoint_path: str,
    job_name: str,
    allow_non_restored_state: bool = False,
) -> RestoreCheck:
    """Every operator's verdict for restoring ``manifest`` (the savepoint at
    ``savepoint_path``) into ``program``'s operators (in the order given), then the
    savepoint's operators the program does not have."""
    checks = []
    known = set()
    for operator in program:
        known.add(operator.operator_id)
        saved = manifest.operators.get(operator.operator_id)
        checks.append(_compare(operator, saved, savepoint_path))
    for operator_id in manifest.operators:
        if operator_id in known:
            continue
        if allow_non_restored_state:
            notes = ("skipped: non-restored state is allowed (--allow-non-restored-state), so it is dropped",)
            checks.append(OperatorCheck(operator_id, Verdict.MISSING, notes=notes))
            continue
        checks.append(
            OperatorCheck(
                operator_id,
                Verdict.MISSING,
                problems=(
                    f"Failed to rollback to checkpoint/savepoint {savepoint_path}. Cannot map checkpoint/savepoint "
                    f"state for operator {operator_id} to the new program, because the operator is not available in "
                    "the new program. If you want to allow to skip this, you can set the --allowNonRestoredState "
                    "option on the CLI.",
                ),
            )
        )
    return RestoreCheck(savepoint_path, job_name, allow_non_restored_state, tuple(checks))


def _compare(operator: ProgramOperator, saved: OperatorState | None, savepoint_path: str) -> OperatorCheck:
    declared = operator.declared
    notes: list[str] = []
    if declared is not None and declared.unknown is not None:
        notes.append(f"its states are checked when its tasks open: {declared.unknown}")
    if saved is None:
        states = tuple(StateCheck(name, None, declaration) for name, declaration in _declared(declared).items())
        if operator.source_kind is None and declared is None:
            return OperatorCheck(
                operator.operator_id, Verdict.STATELESS, name=operator.name, vertex_id=operator.vertex_id
            )
        what = "its source starts afresh" if operator.source_kind is not None else "it starts empty"
        return OperatorCheck(
            operator.operator_id,
            Verdict.NEW,
            states=states,
            notes=(f"no state in the savepoint: {what}", *notes),
            name=operator.name,
            vertex_id=operator.vertex_id,
        )
    problems: list[str] = []
    keyed = bool(saved.files) or bool(saved.states)
    if saved.max_parallelism != operator.max_parallelism and (keyed or operator.max_parallelism_configured):
        problem = (
            f"Failed to rollback to checkpoint/savepoint {savepoint_path}. Max parallelism mismatch between "
            f"checkpoint/savepoint state and new program. Cannot map operator {operator.operator_id} with max "
            f"parallelism {saved.max_parallelism} to new program with max parallelism {operator.max_parallelism}. "
            "This indicates that the program has been changed in a non-compatible way after the checkpoint/savepoint."
        )
        if not operator.max_parallelism_configured:
            # Flink would take the savepoint's max parallelism over; flowmagic's key groups do not.
            problem += f" Set the max parallelism the savepoint has: env.set_max_parallelism({saved.max_parallelism})."
        problems.append(problem)
    if saved.source is not None:
        source = _source(operator, saved.source)
        (problems if source.startswith(_SOURCE) else notes).append(source)
    checked: list[StateCheck] = []
    program_states = _declared(declared)
    for name in sorted(set(saved.states) | set(program_states)):
        before, after = saved.states.get(name), program_states.get(name)
        refused = None if before is None or after is None else incompatibility((before.kind, before.type_info), after)
        checked.append(StateCheck(name, before, after, refused))
        if refused is not None:
            # The text the task gives when it registers the state.
            problems.append(f"{refused} (keyed state {name!r}, restored from a snapshot)")
    if saved.files:
        groups = f"key groups 0-{saved.max_parallelism - 1}"
        if saved.parallelism != operator.parallelism:
            notes.append(f"keyed state: {groups} re-split from {saved.parallelism} to {operator.parallelism} subtasks")
        else:
            notes.append(f"keyed state: {groups} over {operator.parallelism} subtasks, as saved")
    written = sum(path is not None for path in saved.operator_state)
    if written:
        moved = "" if saved.parallelism == operator.parallelism else f", handed out to {operator.parallelism}"
        notes.append(f"operator state of {written} subtask{'s' if written != 1 else ''}{moved}")
    verdict = Verdict.INCOMPATIBLE if problems else Verdict.RESTORED
    return OperatorCheck(
        operator.operator_id,
        verdict,
        states=tuple(checked),
        problems=tuple(problems),
        notes=tuple(notes),
        name=operator.name,
        vertex_id=operator.vertex_id,
    )


def _declared(declared: Declared | None) -> dict[str, tuple[str, str | None]]:
    return {} if declared is None else declared.states


def _source(operator: ProgramOperator, position: dict[str, Any]) -> str:
    """A source's position in words, or the restore's refusal of it."""
    kind = position.get("kind")
    if operator.source_kind is not None and kind != operator.source_kind:
        return (
            f"Cannot restore the source {operator.name!r} (operator {operator.operator_id}): the savepoint holds the "
            f"position of a source of another kind ({kind!r}, not {operator.source_kind!r})."
        )
    kind = str(kind).removeprefix("source.")
    if position.get("finished"):
        return f"source position ({kind}): finished, not read again"
    if "offset" in position:
        return f"source position ({kind}): goes on from record {position['offset']:,}"
    if "unread" in position:
        return f"source position ({kind}): lines received but not processed are processed first"
    if "seen" in position:
        pending = len(position.get("pending", []))
        return f"source position ({kind}): {len(position['seen'])} files seen, {pending} not read to their end"
    return f"source position ({kind})"


def program_operators(graph: ExecutionGraph, plans: dict[str, VertexPlan] | None = None) -> list[ProgramOperator]:
    """The operators of ``graph``, in the JobGraph's order, with the keyed states they
    declare when opened (``plans``: the job's, else built here)."""
    job_graph = graph.job_graph
    stream_graph = job_graph.stream_graph
    operator_ids = {node_id: digest.hex() for node_id, digest in stream_graph.operator_hashes.items()}
    declared = declared_states(plans if plans is not None else build_plans(graph), operator_ids)
    operators = []
    for vertex in job_graph.sorted_vertices():
        execution_vertex = graph.vertices[vertex.id]
        for node_id in vertex.chain:
            node = stream_graph.nodes[node_id]
            operator_id = operator_ids.get(node_id)
            if operator_id is None:
                continue
            source_kind = str(node.operator.kind) if node.source_kind is not None and node.operator else None
            operators.append(
                ProgramOperator(
                    operator_id,
                    node.name,
                    vertex.id,
                    execution_vertex.parallelism,
                    execution_vertex.max_parallelism,
                    vertex.max_parallelism > 0,
                    source_kind,
                    declared.get(operator_id),
                )
            )
    return operators


def read_snapshot(savepoint_path: str, storage_of: Callable[[str], Storage]) -> tuple[Manifest, Storage]:
    """The manifest of the savepoint or retained checkpoint at ``savepoint_path``, its
    signature and paths checked, and the storage its files are in (a retained checkpoint's
    are its job's, in the directory above it)."""
    savepoint = storage_of(savepoint_path)
    if not savepoint.exists(MANIFEST):
        retained = sorted(
            (name for name in savepoint.list("") if name.startswith("chk-") and name[4:].isdigit()),
            key=lambda name: int(name[4:]),
        )
        if retained:
            raise JobError(
                f"Cannot restore from {savepoint_path!r}: it is a job's checkpoint directory, not a checkpoint. "
                f"Restore from one of its retained checkpoints ({', '.join(retained)}): execution.savepoint.path "
                f"= {posixpath.join(savepoint_path.rstrip('/'), retained[-1])!r}."
            )
    manifest = read_manifest(savepoint)
    if manifest.root == "..":
        savepoint = storage_of(posixpath.dirname(savepoint_path.rstrip("/")))
    elif manifest.root != ".":
        raise JobError(f"Cannot restore from {savepoint_path!r}: {MANIFEST} names files in {manifest.root!r}.")
    return manifest, savepoint


def check_restore(
    graph: ExecutionGraph, savepoint_path: str, *, allow_non_restored_state: bool = False, spark: Any = None
) -> RestoreCheck:
    """Every operator's verdict for restoring the savepoint (or retained checkpoint
    ``chk-<n>``) at ``savepoint_path`` into ``graph``'s job. The savepoint is read as a
    restore reads it (its signature, paths and files checked; a damaged or unsigned one
    raises :class:`~flowmagic.errors.StateIntegrityError`); nothing runs on Spark
    (``spark``'s S3A settings reach an ``s3a://`` path)."""

    def storage_of(location: str) -> Storage:
        storage = Storage(location)
        if storage.is_local:
            return storage
        from flowmagic.runtime.spark.session import get_spark_session

        return Storage(location, s3a_options(get_spark_session(spark).conf.getAll))

    manifest, storage = read_snapshot(savepoint_path, storage_of)
    operators = program_operators(graph)
    names = {operator.operator_id: f"{operator.name!r} ({operator.operator_id})" for operator in operators}
    verify_snapshot(storage, manifest, lambda operator_id: names.get(operator_id, operator_id))
    return compare_restore(manifest, operators, savepoint_path, graph.job_name, allow_non_restored_state)
