"""The SQL cell (``%%flow NAME --sql``) in a notebook executed by nbclient on a real kernel: the
seed's statements (tests/conformance/sql/cases/s01) show Flink's three plans next to the graphs,
bind NAME to the pipeline Flink would submit, and ``%flow explain`` prints Flink's EXPLAIN."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from test_magics_notebook import WIDGET_VIEW, execute

SQL = Path(__file__).parents[1] / "conformance" / "sql"
SEED = (SQL / "cases" / "s01_seed_group_count.sql").read_text()
RECORDED = json.loads((SQL / "expected" / "s01_seed_group_count.json").read_text())["streaming"]
COUNTS = json.loads((SQL / "expected" / "s02_group_count_values.json").read_text())["streaming"]

CELLS = [
    ("%load_ext flowmagic", []),
    ("%%flow seed --sql\nSET 'parallelism.default' = '2';\n" + SEED, []),
    ("%flow explain seed", []),
    ("import json\nprint(json.dumps(seed.job_graph.to_dict()))", []),
    ("%%flow typo --sql\n" + SEED.replace("SELECT num,", "SELECT nope,"), ["raises-exception"]),
    ("%%flow kk --sql\nCREATE TABLE kk (a INT) WITH ('connector' = 'kafka');\nSELECT a FROM kk;", ["raises-exception"]),
    ("%flow explain seed --changelog", []),
    ("%%flow counts --sql -p 1 --show none\n" + (SQL / "cases" / "s02_group_count_values.sql").read_text(), []),
    ("%flow run counts", []),
]


@pytest.fixture(scope="module")
def executed() -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source, metadata={"tags": tags}) for source, tags in CELLS]
    return execute(notebook)


def _text(output: nbformat.NotebookNode) -> str:
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return "\n".join(output.traceback)
    return output.data.get("text/plain", "")


def test_the_sql_cell_shows_the_plans_with_links_then_the_graphs(executed) -> None:
    saved, live = executed.cells[1].outputs
    page = saved.data["text/html"]
    for title in ("Abstract Syntax Tree", "Optimized Physical Plan", "Optimized Execution Plan"):
        assert f"<b>{title}</b>" in page
    # The graphs follow the plans in the saved pictures, as DataStream cells keep them.
    assert page.index("Optimized Execution Plan") < page.index("<b>StreamGraph</b>") < page.index("<b>JobGraph</b>")
    # Hovering the GroupAggregate line names the operator and the JobGraph vertex it became.
    assert (
        'title="ExecNode [3] became GroupAggregate[3] (StreamGraph node 3), in JobGraph vertex '
        '&#x27;GroupAggregate[3] -&gt; ConstraintEnforcer[4]&#x27;">GroupAggregate(groupBy=[num]' in page
    )
    assert WIDGET_VIEW in live.data


def test_explain_prints_flinks_explain_text(executed) -> None:
    (output,) = executed.cells[2].outputs
    assert output.text == RECORDED["explain"]


def test_the_name_is_bound_to_the_job_graph_flink_submits(executed) -> None:
    (output,) = executed.cells[3].outputs
    vertices = json.loads(output.text)["vertices"]
    assert [(v["id"], v["name"], v["parallelism"]) for v in vertices] == [
        (v["id"], v["name"], v["parallelism"]) for v in RECORDED["job_graph"]["vertices"]
    ]


def test_an_invalid_statement_names_its_line_and_column_in_flinks_words(executed) -> None:
    text = re.sub(r"\x1b\[[0-9;]*m", "", _text(executed.cells[4].outputs[-1]))
    assert "ValidationException: SQL validation failed. From line 1, column 8 to line 1, column 11: " in text
    assert "Column 'nope' not found in any table" in text
    assert "(the statement at line 4 of the script)" in text


def test_a_missing_connector_shows_flinks_message_its_cause_then_what_flowmagic_offers(executed) -> None:
    text = re.sub(r"\x1b\[[0-9;]*m", "", _text(executed.cells[5].outputs[-1]))
    message = text.index("ValidationException: Unable to create a source for reading table")
    # As Flink's client prints a chained exception: the message, then its cause, then the offer.
    cause = text.index("Caused by: ValidationException: Could not find any factory for identifier 'kafka'")
    offer = text.index("flowmagic has no 'kafka' connector; it offers blackhole, datagen, filesystem, print.")
    assert message < text.index("(the statement at line 2 of the script)") < cause < offer
    assert text.count("flowmagic has no 'kafka' connector") == 1


def test_the_cell_and_explain_changelog_say_why_the_seed_query_retracts(executed) -> None:
    saved, _live = executed.cells[1].outputs
    # Under the plans: the node that first emits updates, named as its operator is.
    assert "<b>Why does this query retract?</b>" in saved.data["text/html"]
    assert "<b>GroupAggregate[3]</b> emits +I, -U, +U" in saved.data["text/html"]
    (output,) = executed.cells[6].outputs
    text = output.data["text/plain"]
    assert text.startswith(
        "Why does this query retract?\nThis query retracts: its result holds +I, -U, +U rows, starting at "
        "GroupAggregate[3].\n"
    )
    # The plan it is read from is Flink's EXPLAIN CHANGELOG_MODE.
    physical = RECORDED["explain_changelog_mode"].split("== Optimized Physical Plan ==\n")[1].split("\n\n")[0]
    assert f"== Optimized Physical Plan (CHANGELOG_MODE) ==\n{physical}\n" in text
    assert "<li>Aggregate per window instead" in output.data["text/html"]


def _tableau_rows(text: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines()[3:-2]]


def test_running_a_query_shows_its_result_then_the_sql_clients_text(executed) -> None:
    outputs = executed.cells[8].outputs
    job, static, live = outputs[0], outputs[1], outputs[2]
    assert job.data["text/plain"] == "<Job 'counts': FINISHED, 2/2 subtasks finished>"
    # The job view says which plan node each vertex runs.
    assert "Collect table sink runs <code>[3]:GroupAggregate(" in job.data["text/html"]
    # What the saved notebook keeps: Flink's tableau text of the changelog, rows in Flink's order per key.
    text = static.data["text/plain"]
    recorded = COUNTS["sql_client_tableau"].splitlines()
    assert text.splitlines()[:3] == recorded[:3] and text.splitlines()[-2:] == recorded[-2:]
    rows = _tableau_rows(text)
    assert sorted(rows, key=lambda row: int(row[1])) == [row for row in COUNTS["rows"]]
    assert "<pre>" in static.data["text/html"] and "Received a total of 10 rows" in static.data["text/html"]
    assert "<summary>This query retracts: its result holds +I, -U, +U rows" in static.data["text/html"]
    # The live view is a widget, which a saved notebook replaces by the text above.
    assert WIDGET_VIEW in live.data
