"""FileSink output as PyFlink 2.3.0 writes it: bucket directories, part file names and the
lines ``Encoder.simple_string_encoder()`` writes for typed records (recorded in
``pyflink_file_sink.json``; names compared by pattern, contents exactly)."""

from __future__ import annotations

import datetime
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from conformance_support import CONFORMANCE

import flowmagic
from flowmagic.errors import InvalidArgumentError, UnsupportedFeatureError

RECORDED = json.loads((CONFORMANCE / "pyflink_file_sink.json").read_text())
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

# The program PyFlink ran (it writes under sys.argv[1]).
PROGRAM = (CONFORMANCE / "pyflink_programs" / "file_sink.py").read_text().replace("from pyflink", "from flowmagic")


def _hours(before: datetime.datetime, after: datetime.datetime, fmt: str, zone: Any) -> set[str]:
    return {moment.astimezone(zone).strftime(fmt) for moment in (before, after)}


def _written(root: Path) -> list[tuple[str, str]]:
    return sorted(
        (os.path.relpath(os.path.join(parent, name), root), Path(parent, name).read_text(encoding="utf-8"))
        for parent, _dirs, names in os.walk(root)
        for name in names
    )


def test_a_pyflink_program_writes_the_files_pyflink_writes(
    tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["file_sink.py", str(out)])
    before = datetime.datetime.now(datetime.UTC)
    exec(compile(PROGRAM, "file_sink.py", "exec"), {"__name__": "__main__"})
    after = datetime.datetime.now(datetime.UTC)
    written = _written(out)
    (local_hour,) = _hours(before, after, "%Y-%m-%d--%H", None) & {path.split("/")[1] for path, _ in written}
    (utc_hour,) = _hours(before, after, "%Y/%m/%d at %H", datetime.UTC) & {
        path.removeprefix("strings/").rsplit("/", 1)[0] for path, _ in written if path.startswith("strings/")
    }
    ids = {path: _UUID.search(path).group(0) for path, _ in written}  # type: ignore[union-attr]
    named = sorted(
        (_UUID.sub("{uuid}", path).replace(local_hour, "{local_hour}").replace(utc_hour, "{utc_hour}"), content)
        for path, content in written
    )
    # PyFlink writes a pickled stream's records as Java byte[] identities; flowmagic as str().
    pickled = "('a', 1)\n('b', 2)\n"
    expected = [(path, pickled if path.startswith("pickled/") else content) for path, content in RECORDED["files"]]
    assert named == sorted(expected)
    # One writer's bucket keeps its id across rolled parts; two writers draw their own.
    assert len({ids[path] for path in ids if path.startswith("tuples_rolled/")}) == 1
    assert len({ids[path] for path in ids if path.startswith("two_writers/")}) == 2


def test_bucket_formats_and_their_errors() -> None:
    assigner = flowmagic.BucketAssigner.date_time_bucket_assigner("yy-M-d 'h'''H:mm:ss MMM MMMM", "UTC")
    moment = datetime.datetime(2026, 3, 5, 7, 8, 9, tzinfo=datetime.UTC)
    assert assigner.bucket_id(int(moment.timestamp() * 1000)) == "26-3-5 h'7:08:09 Mar March"
    assert flowmagic.BucketAssigner.base_path_bucket_assigner().bucket_id(0) == ""
    with pytest.raises(UnsupportedFeatureError, match="'EEE'"):
        flowmagic.BucketAssigner.date_time_bucket_assigner("yyyy EEE")
    with pytest.raises(InvalidArgumentError, match="Unknown time-zone ID: Mars/Olympus"):
        flowmagic.BucketAssigner.date_time_bucket_assigner(timezone_id="Mars/Olympus")
    with pytest.raises(InvalidArgumentError, match="incomplete string literal"):
        flowmagic.BucketAssigner.date_time_bucket_assigner("yyyy 'open")


def test_java_strings_of_doubles() -> None:
    from flowmagic.runtime.records import java_double_string

    values = [2.5, 1e20, 0.001, 0.0001, 1e7, 9999999.0, -0.0, 1.2345e-7, 100.0, float("nan"), float("-inf")]
    assert [java_double_string(v) for v in values] == [
        "2.5", "1.0E20", "0.001", "1.0E-4", "1.0E7", "9999999.0", "-0.0", "1.2345E-7", "100.0", "NaN", "-Infinity",
    ]  # fmt: skip
