"""The restore check: a real savepoint of a real continuous job, compared with edited programs.

One savepoint is written once for the module (a data generator, a stateless map, two keyed
functions with a ValueState each); every test edits the program and checks each operator's
verdict, the texts a refused restore gives, and that a job restoring from the savepoint
refuses with the whole list at once. The checks themselves run no Spark job.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from continuous_support import Printed, start, wait_for

import flowmagic
from flowmagic import compile as passes
from flowmagic import errors
from flowmagic.runtime.continuous.restore_check import RestoreCheck, Verdict, check_restore
from flowmagic.runtime.continuous.state_store import MANIFEST
from flowmagic.vocabulary.configuration import Configuration


class _Count(flowmagic.KeyedProcessFunction):
    def open(self, runtime_context) -> None:
        self.count = runtime_context.get_state(flowmagic.ValueStateDescriptor("count", flowmagic.Types.LONG()))

    def process_element(self, value, ctx, out):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        out.collect((value[0], count))


class _CountInAList(flowmagic.KeyedProcessFunction):
    def open(self, runtime_context) -> None:
        self.count = runtime_context.get_list_state(flowmagic.ListStateDescriptor("count", flowmagic.Types.LONG()))

    def process_element(self, value, ctx, out):
        self.count.add(1)
        out.collect((value[0], len(list(self.count.get()))))


class _CountAsString(flowmagic.KeyedProcessFunction):
    def open(self, runtime_context) -> None:
        self.count = runtime_context.get_state(flowmagic.ValueStateDescriptor("count", flowmagic.Types.STRING()))

    def process_element(self, value, ctx, out):
        out.collect(value)


class _Seen(flowmagic.KeyedProcessFunction):
    """Forwards a key's first record only (a ValueState ``seen``)."""

    def open(self, runtime_context) -> None:
        self.seen = runtime_context.get_state(flowmagic.ValueStateDescriptor("seen", flowmagic.Types.BOOLEAN()))

    def process_element(self, value, ctx, out):
        if not self.seen.value():
            self.seen.update(True)
            out.collect(value)


class _Totals(flowmagic.KeyedProcessFunction):
    def open(self, runtime_context) -> None:
        self.total = runtime_context.get_state(flowmagic.ValueStateDescriptor("total", flowmagic.Types.LONG()))

    def process_element(self, value, ctx, out):
        out.collect(value)


def program(
    env: flowmagic.StreamExecutionEnvironment,
    *,
    counts=_Count,
    first: bool = True,
    totals: bool = False,
    socket_source: bool = False,
) -> None:
    """The savepoint's program, or an edit of it."""
    if socket_source:
        numbers = env.socket_text_stream("127.0.0.1", 9).uid("numbers")
    else:
        numbers = env.from_datagen(lambda i: i, rows_per_second=500).uid("numbers")
    pairs = numbers.map(lambda i: (f"k{int(i) % 5}", 1)).name("pairs")
    counted = pairs.key_by(lambda pair: pair[0]).process(counts()).uid("counts").name("counts")
    if first:
        counted = counted.key_by(lambda pair: pair[0]).process(_Seen()).uid("first").name("first per key")
    if totals:
        counted = counted.key_by(lambda pair: pair[0]).process(_Totals()).uid("totals").name("totals")
    counted.print()


@pytest.fixture(scope="module")
def savepoint(spark, tmp_path_factory) -> str:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    program(env)
    printed = Printed()
    job = start(env, printed, "before the edit")
    wait_for(lambda: job.epochs >= 2 and len(printed.lines) >= 5, job)
    return job.stop_with_savepoint(str(tmp_path_factory.mktemp("restore-check") / "sp"))


def graph_of(env: flowmagic.StreamExecutionEnvironment, name: str = "edited"):
    return passes.build(env.get_stream_graph(name)).execution_graph


def checked(savepoint: str, parallelism: int = 2, allow: bool = False, **edits) -> RestoreCheck:
    env = flowmagic.StreamExecutionEnvironment(parallelism=parallelism)
    program(env, **edits)
    return check_restore(graph_of(env), savepoint, allow_non_restored_state=allow)


def verdicts(check: RestoreCheck) -> dict[str, Verdict]:
    return {operator.label: operator.verdict for operator in check.operators}


def operator(check: RestoreCheck, label: str):
    (found,) = [operator for operator in check.operators if operator.label == label]
    return found


def test_the_unedited_program_at_another_parallelism_restores_every_stateful_operator(savepoint) -> None:
    check = checked(savepoint, parallelism=3)
    assert verdicts(check) == {
        "Source: Data Generator": Verdict.RESTORED,
        "pairs": Verdict.STATELESS,
        "counts": Verdict.RESTORED,
        "first per key": Verdict.RESTORED,
        "Sink: Print to Std. Out": Verdict.STATELESS,
    }
    assert not check.refused and check.error() is None
    counts = operator(check, "counts")
    assert [state.text() for state in counts.states] == ["state 'count': VALUE of Long, restored"]
    assert "keyed state: key groups 0-127 re-split from 2 to 3 subtasks" in counts.notes
    source = operator(check, "Source: Data Generator")
    assert any(note.startswith("source position (datagen): goes on from record ") for note in source.notes)
    text = check.to_text()
    assert text.startswith(f"Restoring {savepoint} into 'edited': restores (3 restored)")
    assert "restored      counts  [" in text


def test_a_state_of_another_kind_or_type_is_incompatible_in_the_words_the_task_gives(savepoint) -> None:
    listed = checked(savepoint, counts=_CountInAList)
    counts = operator(listed, "counts")
    assert counts.verdict is Verdict.INCOMPATIBLE
    assert counts.problems == (
        "Incompatible key/value state types. Was [VALUE], registered with [LIST]. "
        "(keyed state 'count', restored from a snapshot)",
    )
    assert counts.states[0].text() == "state 'count': VALUE of Long in the savepoint, LIST of Long in the program"
    assert listed.refused
    retyped = operator(checked(savepoint, counts=_CountAsString), "counts")
    assert retyped.verdict is Verdict.INCOMPATIBLE
    assert retyped.problems[0].startswith(
        "For heap backends, the new state serializer (String) must not be incompatible with the old state "
        "serializer (Long)."
    )


def test_state_of_a_removed_operator_is_missing_and_needs_allow_non_restored_state(savepoint) -> None:
    check = checked(savepoint, first=False)
    (missing,) = check.of(Verdict.MISSING)
    assert missing.name is None and missing.vertex_id is None
    assert missing.problems == (
        f"Failed to rollback to checkpoint/savepoint {savepoint}. Cannot map checkpoint/savepoint state for operator "
        f"{missing.operator_id} to the new program, because the operator is not available in the new program. If you "
        "want to allow to skip this, you can set the --allowNonRestoredState option on the CLI.",
    )
    assert isinstance(check.error(), errors.NonRestoredStateError)
    allowed = checked(savepoint, first=False, allow=True)
    assert [operator.verdict for operator in allowed.of(Verdict.MISSING)] == [Verdict.MISSING]
    assert not allowed.refused
    assert "dropped" in allowed.of(Verdict.MISSING)[0].notes[0]


def test_an_added_stateful_operator_is_new_and_starts_empty(savepoint) -> None:
    check = checked(savepoint, totals=True)
    totals = operator(check, "totals")
    assert totals.verdict is Verdict.NEW
    assert [state.text() for state in totals.states] == ["state 'total': VALUE of Long, new: starts empty"]
    assert not check.refused


def test_a_changed_max_parallelism_is_incompatible_in_flinks_words(savepoint) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.set_max_parallelism(256)
    program(env)
    check = check_restore(graph_of(env), savepoint)
    counts = operator(check, "counts")
    assert counts.verdict is Verdict.INCOMPATIBLE
    assert counts.problems[0] == (
        f"Failed to rollback to checkpoint/savepoint {savepoint}. Max parallelism mismatch between "
        f"checkpoint/savepoint state and new program. Cannot map operator {counts.operator_id} with max "
        "parallelism 128 to new program with max parallelism 256. This indicates that the program has been "
        "changed in a non-compatible way after the checkpoint/savepoint."
    )
    assert type(check.error()) is errors.JobError
    # A restore was accepted before, and read the key groups of 128 as if they were of 256.
    configuration = Configuration().set_string("execution.savepoint.path", savepoint)
    restoring = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    restoring.set_parallelism(2)
    restoring.set_max_parallelism(256)
    program(restoring)
    with pytest.raises(errors.JobError, match="Max parallelism mismatch between checkpoint/savepoint state"):
        start(restoring, Printed(), "max parallelism changed")


def test_a_source_of_another_kind_under_the_same_uid_is_incompatible(savepoint) -> None:
    source = operator(checked(savepoint, socket_source=True), "Source: Socket Stream")
    assert source.verdict is Verdict.INCOMPATIBLE
    assert source.problems[0].startswith(
        "Cannot restore the source 'Source: Socket Stream' (operator "
    ) and source.problems[0].endswith(
        "the savepoint holds the position of a source of another kind ('source.datagen', not 'source.socket')."
    )


def test_a_job_restoring_into_an_edited_program_is_refused_with_every_problem_at_once(savepoint) -> None:
    configuration = Configuration().set_string("execution.savepoint.path", savepoint)
    env = flowmagic.StreamExecutionEnvironment.get_execution_environment(configuration)
    env.set_parallelism(2)
    program(env, counts=_CountInAList, first=False)
    with pytest.raises(errors.NonRestoredStateError) as refused:
        start(env, Printed(), "refused")
    message = str(refused.value)
    # Flink's first failure, then the list: the incompatible state too, which Flink's tasks
    # would have reported only after the missing operator was dealt with.
    assert message.startswith(f"Failed to rollback to checkpoint/savepoint {savepoint}. Cannot map")
    assert "Incompatible key/value state types. Was [VALUE], registered with [LIST]." in message
    assert "incompatible  counts  [" in message and "missing       (no operator in the program)  [" in message


def test_an_unsigned_or_altered_savepoint_is_refused_before_anything_is_read(savepoint, tmp_path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(savepoint, copy)
    manifest = copy / MANIFEST
    data = json.loads(manifest.read_text())
    data.pop("signature")
    manifest.write_text(json.dumps(data))
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    program(env)
    with pytest.raises(errors.StateIntegrityError, match="carries no signature"):
        check_restore(graph_of(env), str(copy))
    flowmagic.runtime.trust_savepoint(str(copy))
    assert not check_restore(graph_of(env), str(copy)).refused
    state_file = next(path for path in Path(copy).rglob("*.pkl"))
    state_file.write_bytes(state_file.read_bytes() + b"x")
    with pytest.raises(errors.StateIntegrityError, match="The checkpoint or savepoint is damaged"):
        check_restore(graph_of(env), str(copy))


def test_the_check_is_drawn_on_the_job_graph_with_a_legend_and_the_states_on_hover(savepoint) -> None:
    from flowmagic.render.restore_check import VERDICT_FILLS
    from flowmagic.widgets.restore_check import RestoreCheckView

    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    program(env, counts=_CountInAList, first=False, totals=True)
    graph = graph_of(env)
    view = RestoreCheckView(graph.job_graph, check_restore(graph, savepoint))
    svg = view.svg()
    # Each vertex filled by its operators' gravest verdict: the keyed function's state is
    # refused, the added one is new; the removed operator's state is drawn apart.
    counts = svg[svg.index("counts: incompatible") - 2000 : svg.index("counts: incompatible")]
    assert VERDICT_FILLS["incompatible"] in counts.rsplit("<g id=", 1)[-1]
    totals = svg[: svg.index("totals: new")].rsplit("<g id=", 1)[-1]
    assert VERDICT_FILLS["new"] in totals
    assert "savepoint state without an operator" in svg and "missing: needs --allow-non-restored-state" in svg
    for meaning in ("incompatible: refused", "new: starts empty", "restored", "no state"):
        assert meaning in svg
    # Hovering a vertex names the operator's ID, its states and the refusal in Flink's words.
    (counts_check,) = [operator for operator in view.check.operators if operator.label == "counts"]
    assert f"counts [{counts_check.operator_id}]: incompatible" in svg
    assert "Incompatible key/value state types. Was [VALUE], registered with [LIST]." in svg
    bundle = view._repr_mimebundle_()
    assert bundle["text/plain"] == view.check.to_text()
    html_output = bundle["text/html"]
    assert html_output.count('<img src="data:image/svg+xml;base64,') == 1
    assert f"<code>{counts_check.operator_id}</code>" in html_output and "incompatible</td>" in html_output
