"""Flink SQL's rows against what real Flink 2.3.0 emitted (tests/conformance/sql).

For every case and mode with recorded rows: the statements run through ``execute_sql`` on the
local executor (a few representative ones on Spark too), and the changelog must be Flink's
under the case's order claim (``TOTAL``, ``PER_KEY``, ``MULTISET``; ``FINAL_ONLY`` checks the
final rows only), the final rows Flink's, the ``print`` sink's lines Flink's, the files a
``filesystem`` sink wrote Flink's lines, and ``print()`` Flink's tableau text where the order is
total. Cells are compared as the SQL client writes them, from ``collect()``'s rows (so that a
leading space counts) and from the printed tableau.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pytest

from flowmagic.runtime.sql.values import parse_type, value_string
from flowmagic.table import EnvironmentSettings, TableEnvironment

HERE = Path(__file__).parents[1] / "conformance" / "sql"
_SET = re.compile(r"^SET\s+'([^']+)'\s*=\s*'([^']*)'$", re.I | re.S)

#: Representative cases also run on Spark: a retracting aggregate, a batch two-phase one, a
#: print sink, a filesystem sink, scans of files; a two-phase window aggregate, session windows
#: dropping late rows, a left join retracting its NULL-padded rows, a Top-N over an updating
#: input, an event-time deduplication, a MultipleInput hash join; aggregates' own FILTER
#: (WHERE ...) in a group aggregate (both modes), the batch DISTINCT rewrite and a window aggregate.
ON_SPARK = {
    ("s04_multi_aggregates", "streaming"),
    ("s04_multi_aggregates", "batch"),
    ("s16_insert_print", "streaming"),
    ("r18_insert_filesystem_csv", "batch"),
    ("r16_filesystem_json_directory", "streaming"),
    ("s05_tumble_window", "streaming"),
    ("r28_session_window_merge", "streaming"),
    ("r30_left_join_updating_right", "streaming"),
    ("r29_topn_updating_input", "streaming"),
    ("r11_dedup_first_rowtime", "streaming"),
    ("s10_interval_join", "batch"),
    ("r63_aggregate_filter", "streaming"),
    ("r63_aggregate_filter", "batch"),
    ("r64_aggregate_filter_count_distinct", "batch"),
    ("r66_tumble_aggregate_filter", "streaming"),
}


def _recorded(stage: dict[str, Any]) -> bool:
    # An INSERT into a blackhole records that it ran (``executed_graph_equals_recorded``): it must run.
    keys = ("rows", "final_rows", "stdout_lines", "sink_files", "rows_error", "executed_graph_equals_recorded")
    return any(stage.get(k) for k in keys)


def _params() -> list[object]:
    params = []
    for path in sorted((HERE / "expected").glob("*.json")):
        recorded = json.loads(path.read_text())
        for mode in ("streaming", "batch"):
            stage = recorded[mode]
            if "skipped" in stage or not _recorded(stage):
                continue
            for executor in ("local", "spark"):
                if executor == "spark" and (path.stem, mode) not in ON_SPARK:
                    continue
                params.append(pytest.param(path.stem, mode, executor, id=f"{path.stem}-{mode}-{executor}"))
    return params


def _statements(case: str, out: Path) -> list[str]:
    text = (HERE / "cases" / f"{case}.sql").read_text()
    text = text.replace("${SQL_DATA}", str(HERE / "data")).replace("${SQL_OUT}", str(out))
    body = "\n".join(line for line in text.splitlines() if not line.strip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*$", body, flags=re.M) if s.strip()]


def _number(cell: str) -> tuple[int, Decimal, str]:
    try:
        return (0, Decimal(cell), "")
    except (InvalidOperation, ValueError):
        return (1, Decimal(0), cell)


def _canonical(rows: list[list[str]], order: str, key: list[int]) -> list[list[str]]:
    """Rows in the case's canonical order (as the recorder wrote them)."""
    if order == "TOTAL" or not rows:
        return rows
    if order == "PER_KEY":
        return sorted(rows, key=lambda row: [_number(row[i]) for i in key])
    width = len(rows[0])
    return sorted(rows, key=lambda row: [_number(row[i]) for i in [*range(1, width), 0]])


def _materialized(rows: list[list[str]]) -> list[list[str]]:
    counts: dict[tuple[str, ...], int] = {}
    for row in rows:
        counts[tuple(row[1:])] = counts.get(tuple(row[1:]), 0) + (1 if row[0].startswith("+") else -1)
    final = [["+I", *values] for values, n in counts.items() for _ in range(max(n, 0))]
    return _canonical(final, "MULTISET", [])


def _printed_lines(text: str) -> list[list[str]]:
    out = []
    for line in text.splitlines():
        prefix, _, rest = line.partition("> ")
        out.append([prefix + ">", rest] if rest and prefix.isdigit() else ["", line])
    return out


def _run(case: str, mode: str, executor: str, out: Path) -> tuple[list[list[str]], str]:
    """The case's query run: its collected changelog (cells as the SQL client writes them) and
    what was printed (the tableau of a query; the print sink's lines of an INSERT)."""
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings)
    config = t_env.get_config()
    config.set("parallelism.default", "2")
    config.set("table.local-time-zone", "UTC")
    config.set("flowmagic.executor", executor)
    *setup, query = _statements(case, out)
    for statement in setup:
        match = _SET.match(statement)
        if match:
            config.set(match.group(1), match.group(2))
        else:
            t_env.execute_sql(statement)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = t_env.execute_sql(query)
        if query.upper().startswith("INSERT"):
            result.wait()
            return [], printed.getvalue()
        rows = list(result.collect())
        result.print()
    types = result.get_table_schema().get_field_data_types()
    # The SQL client writes a TIMESTAMP_LTZ in the session's time zone.
    zone = config.get("table.local-time-zone", "UTC")
    cells = [
        [
            row.get_row_kind().short_string,
            *(
                "<NULL>" if v is None else value_string(_internal(v, t), t, zone)
                for v, t in zip(row, types, strict=True)
            ),
        ]
        for row in rows
    ]
    return cells, printed.getvalue()


def _internal(value: object, type_text: str) -> object:
    """A collected value back in the runtime's form (a timestamp's epoch milliseconds, a date's
    days), for the cell text the SQL client writes."""
    if isinstance(value, datetime.datetime):
        if parse_type(type_text).name == "TIMESTAMP":  # the naive fields of a LocalDateTime
            return (value - datetime.datetime(1970, 1, 1)) // datetime.timedelta(milliseconds=1)
        return round(value.timestamp() * 1000)  # an instant, in this process's time zone
    if isinstance(value, datetime.date):
        return (value - datetime.date(1970, 1, 1)).days
    return value


def _tableau_rows(text: str, streaming: bool) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("|")][1:]
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    return cells if streaming else [["+I", *c] for c in cells]


@pytest.mark.parametrize(("case", "mode", "executor"), _params())
def test_rows_as_flink_emitted_them(case: str, mode: str, executor: str, tmp_path: Path, request: Any) -> None:
    if executor == "spark":
        request.getfixturevalue("spark")
    recorded = json.loads((HERE / "expected" / f"{case}.json").read_text())[mode]
    if recorded.get("rows_error"):
        expected = recorded["rows_error"]["message"].splitlines()[0][:120]
        with pytest.raises(Exception, match=re.escape(expected)):
            _run(case, mode, executor, tmp_path)
        return
    rows, printed = _run(case, mode, executor, tmp_path)
    order, key = recorded.get("order"), recorded.get("order_key") or []
    if recorded.get("stdout_lines"):
        assert _canonical(_printed_lines(printed), order, key) == recorded["stdout_lines"]
    if recorded.get("sink_files"):
        lines = sorted(
            line
            for file in tmp_path.rglob("*")
            if file.is_file() and not file.name.startswith(".")
            for line in file.read_text().splitlines()
        )
        assert lines == recorded["sink_files"]["lines"]
    if recorded.get("final_rows") is not None and not recorded.get("stdout_lines"):
        assert _materialized(rows) == recorded["final_rows"]
    if order != "FINAL_ONLY" and recorded.get("rows") is not None:
        assert _canonical(rows, order, key) == recorded["rows"]
        stripped = [[c.strip() for c in row] for row in recorded["rows"]]
        tableau = _tableau_rows(printed, mode == "streaming")
        assert _canonical(tableau, order, key) == _canonical(stripped, order, key)
        if order == "TOTAL" and recorded.get("sql_client_tableau"):
            assert printed.strip() == recorded["sql_client_tableau"].strip()
