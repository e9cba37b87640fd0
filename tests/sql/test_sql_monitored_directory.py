"""A SQL ``filesystem`` table with ``source.monitor-interval`` is unbounded, as in Flink: it runs
in the continuous mode on real Spark, reading each file that appears in its directory once, and
exactly once across a stop with a savepoint and a restore (files added meanwhile included)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from continuous_support import wait_for

from flowmagic.table import StreamTableEnvironment
from flowmagic.vocabulary.types import RowKind

pytestmark = pytest.mark.usefixtures("spark")

QUERY = "SELECT k, COUNT(*) AS c, SUM(v) AS s FROM files GROUP BY k"


def _environment(directory: Path, **options: str) -> StreamTableEnvironment:
    t_env = StreamTableEnvironment.create()
    config = t_env.get_config()
    config.set("execution.checkpointing.interval", "1 s")
    for key, value in options.items():
        config.set(key, value)
    t_env.execute_sql(
        f"CREATE TABLE files (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{directory}', "
        "'format' = 'csv', 'source.monitor-interval' = '200 ms')"
    )
    return t_env


def _add_file(directory: Path, name: str, rows: list[tuple[str, int]]) -> None:
    """A new file, appearing whole (written hidden, then renamed: the monitor skips hidden files)."""
    hidden = directory / f".{name}"
    hidden.write_text("".join(f"{k},{v}\n" for k, v in rows))
    os.rename(hidden, directory / name)


class _Changelog:
    """The rows a query's collect() gives, read on a thread, and the table they make."""

    def __init__(self, rows: Any):
        self.rows = rows
        self.seen: list[Any] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for row in self.rows:
            self.seen.append(row)

    def table(self, start: dict[str, tuple[int, int]] | None = None) -> dict[str, tuple[int, int]]:
        table = dict(start or {})
        for row in list(self.seen):
            k, c, s = tuple(row)
            if row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
                table[k] = (c, s)
            else:
                assert table.get(k) == (c, s), f"{row} retracts {table.get(k)}"
                del table[k]
        return table


def _totals(*files: list[tuple[str, int]]) -> dict[str, tuple[int, int]]:
    totals: dict[str, tuple[int, int]] = {}
    for rows in files:
        for k, v in rows:
            c, s = totals.get(k, (0, 0))
            totals[k] = (c + 1, s + v)
    return totals


def test_files_added_while_the_query_runs_are_read_once_across_a_savepoint_and_a_restore(tmp_path: Path) -> None:
    directory = tmp_path / "in"
    directory.mkdir()
    first = [("a", 1), ("b", 2), ("a", 3)]
    second = [("b", 10), ("c", 20)]
    third = [("a", 100), ("c", 200), ("d", 300)]
    _add_file(directory, "1.csv", first)

    result = _environment(directory).execute_sql(QUERY)
    job = result.get_job_client()
    changelog = _Changelog(result.collect())
    wait_for(lambda: changelog.table() == _totals(first), job, timeout=240)
    _add_file(directory, "2.csv", second)
    wait_for(lambda: changelog.table() == _totals(first, second), job, timeout=240)
    savepoint = job.stop_with_savepoint(False, str(tmp_path / "sp"))
    changelog.thread.join(60)
    saved = changelog.table()
    assert saved == _totals(first, second)

    # Added while no job runs: the restored job lists it as new; 1.csv and 2.csv are not read again.
    _add_file(directory, "3.csv", third)
    result = _environment(directory, **{"execution.savepoint.path": savepoint}).execute_sql(QUERY)
    job = result.get_job_client()
    restored = _Changelog(result.collect())
    wait_for(lambda: restored.table(saved) == _totals(first, second, third), job, timeout=240)
    final = job.stop_with_savepoint(False, str(tmp_path / "sp2"))
    restored.thread.join(60)
    assert final
    # The aggregates went on from their saved values (each key's first row retracts it) and
    # counted every row once.
    assert restored.table(saved) == _totals(first, second, third)
    assert [tuple(row) for row in restored.seen if row.get_row_kind() is RowKind.INSERT] == [("d", 1, 300)]
