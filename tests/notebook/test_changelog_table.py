"""The model of the SQL result view: a changelog materialized into the table it describes, rows
updated in place, the newest changes kept, totals counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowmagic.widgets.changelog_table import ChangelogTable

SQL = Path(__file__).parents[1] / "conformance" / "sql" / "expected"


def _recorded(case: str) -> dict:
    return json.loads((SQL / f"{case}.json").read_text())["streaming"]


# The upsert key of each case's result (a Top-N's: its partition and rank), or None: the whole row.
@pytest.mark.parametrize(
    ("case", "key"),
    [
        ("s02_group_count_values", (0,)),
        ("s02_group_count_values", None),
        ("s11_topn", (0, 3)),
        ("s11_topn", None),
        ("s12_dedup_keep_last", (0,)),
        ("s12_dedup_keep_last", None),
    ],
)
def test_flinks_recorded_changelog_materializes_into_its_final_rows(case, key) -> None:
    recorded = _recorded(case)
    table = ChangelogTable([column["name"] for column in recorded["columns"]], key)
    for kind, *values in recorded["rows"]:
        table.apply(kind, values)
    assert sorted(table.rows()) == sorted(tuple(row[1:]) for row in recorded["final_rows"])
    assert table.received == len(recorded["rows"]) and table.unmatched == 0


def test_an_update_keeps_its_rows_place() -> None:
    table = ChangelogTable(["num", "cnt"], (0,))
    for kind, row in [("+I", (1, 1)), ("+I", (2, 1)), ("-U", (1, 1)), ("+U", (1, 2)), ("+I", (3, 1))]:
        table.apply(kind, row)
    assert table.rows() == [(1, 2), (2, 1), (3, 1)]
    # Without a key the whole row identifies it, and the +U after a -U takes the freed place.
    whole = ChangelogTable(["num", "cnt"])
    for kind, row in [("+I", (1, 1)), ("+I", (2, 1)), ("-U", (1, 1)), ("+U", (1, 2))]:
        whole.apply(kind, row)
    assert whole.rows() == [(1, 2), (2, 1)]
    # Between the -U and its +U the row is not shown.
    whole.apply("-U", (2, 1))
    assert whole.rows() == [(1, 2)] and len(whole) == 1


def test_an_upsert_without_its_old_row_updates_in_place_and_a_delete_removes() -> None:
    table = ChangelogTable(["k", "v"], (0,))
    for kind, row in [("+I", ("a", 1)), ("+I", ("b", 1)), ("+U", ("a", 5)), ("-D", ("b", 1)), ("-D", ("zz", 0))]:
        table.apply(kind, row)
    assert table.rows() == [("a", 5)]
    assert table.unmatched == 1
    assert dict(table.totals) == {"+I": 2, "+U": 1, "-D": 2}


def test_large_results_keep_the_newest_changes_and_the_table_within_its_bound() -> None:
    table = ChangelogTable(["n"], keep=10, max_rows=100)
    for n in range(1000):
        table.apply("+I", (n,))
    assert table.received == 1000
    assert [change.values for change in table.changes] == [(n,) for n in range(990, 1000)]
    assert table.changes[-1].number == 1000
    # The oldest rows are evicted, as the SQL client's max-table-result.rows does.
    assert table.rows() == [(n,) for n in range(900, 1000)] and table.evicted == 900
    # The most recently changed rows, in table order, with the change that last touched each.
    assert table.recent_rows(3) == [(998, (997,)), (999, (998,)), (1000, (999,))]


def test_recent_rows_follow_updates_to_old_rows() -> None:
    table = ChangelogTable(["k", "c"], (0,))
    for k in range(5):
        table.apply("+I", (k, 1))
    table.apply("-U", (0, 1))
    table.apply("+U", (0, 2))
    assert table.recent_rows(2) == [(7, (0, 2)), (5, (4, 1))]


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="Unknown row kind 'U'"):
        ChangelogTable(["a"]).apply("U", (1,))
