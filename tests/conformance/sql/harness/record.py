"""Record SQL cases on real Flink 2.3 and normalize them into expected/NAME.json (run outside the tests).

    FLINK_LIB=.../deps/lib python record.py [CASE_GLOB...]            # cases of cases.json -> ../expected
    FLINK_LIB=.../deps/lib python record.py --validate SHARED_SQL_DIR  # re-record SHARED/cases, compare
    python record.py --notes                                          # notes of cases.json -> expected

The recorder (SqlRecorder.java, via run.sh) writes a raw JSON per case; this script adds the case's
metadata from cases.json (notes, order claim, skipped modes), writes the data directory and the
${SQL_OUT} directory back as placeholders, and drops what Flink fills at random (job_plan.jid is
never written). --validate records the shared cases with the order claims and notes of their own
expected files and prints every field that differs from them.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SQL = HERE.parent
CONFIG = {
    "parallelism.default": 2,
    "table.local-time-zone": "UTC",
    "counters": "ExecNode ids and Transformation ids reset to 0 before every stage",
}
TOP = ["case", "flink_version", "sql_file", "setup_statements", "query", "config", "bounded", "notes"]


def placeholders(value: object, data_dir: str, out_dir: str) -> object:
    """The absolute data and output paths written back as ${SQL_DATA} and ${SQL_OUT}."""
    text = json.dumps(value)
    text = text.replace(out_dir, "${SQL_OUT}").replace(data_dir, "${SQL_DATA}")
    return json.loads(text)


def record(case_file: Path, data_dir: Path, options: dict) -> dict:
    """Run the Java recorder on one case; its raw document."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.json"
        log = Path(tmp) / "log.txt"
        with log.open("w") as err:
            proc = subprocess.run(
                [str(HERE / "run.sh"), str(case_file), str(data_dir), str(raw), json.dumps(options)],
                stdout=err,
                stderr=subprocess.STDOUT,
                timeout=1800,
            )
        text = log.read_text()
        if proc.returncode != 0 or not raw.exists():
            raise SystemExit(f"recorder failed on {case_file.name}:\n{text[-3000:]}")
        out_dirs = set(re.findall(r"/tmp/sqlrec-out\d+", raw.read_text()))
        doc = json.loads(raw.read_text())
        for out_dir in out_dirs:
            doc = placeholders(doc, str(data_dir), out_dir)
        return placeholders(doc, str(data_dir), "@@no-out-dir@@")


def normalize(name: str, raw: dict, meta: dict) -> dict:
    doc: dict = {
        "case": name,
        "flink_version": "2.3.0",
        "sql_file": f"conformance/sql/cases/{name}.sql",
        "setup_statements": raw["setup_statements"],
        "query": raw["query"],
        "config": CONFIG,
        "bounded": meta.get("bounded", True),
        "notes": meta.get("notes", ""),
    }
    dropped = []
    for mode in ("streaming", "batch"):
        m = dict(raw[mode])
        observed = m.pop("runs_observed", None)
        if observed:
            print(f"  {name} {mode}: {observed}", file=sys.stderr)
        if "job_plan" in m:
            dropped.append(f"{mode}.job_plan.jid")
        doc[mode] = m
    doc["nondeterministic_fields_dropped"] = dropped
    return doc


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def diff(want: object, got: object, path: str, out: list[str]) -> None:
    """Every path at which two JSON values differ."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in list(want) + [k for k in got if k not in want]:
            if k not in got:
                out.append(f"{path}.{k}: missing in the re-recording")
            elif k not in want:
                out.append(f"{path}.{k}: extra in the re-recording")
            else:
                diff(want[k], got[k], f"{path}.{k}", out)
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (a, b) in enumerate(zip(want, got, strict=True)):
            diff(a, b, f"{path}[{i}]", out)
    elif want != got:
        out.append(f"{path}: want {json.dumps(want)[:200]} got {json.dumps(got)[:200]}")


def options_of_shared(exp: dict) -> tuple[dict, dict]:
    modes = {}
    runs = 2
    for mode in ("streaming", "batch"):
        m = exp[mode]
        if "skipped" in m:
            modes[mode] = {"skipped": m["skipped"]}
        elif "order" in m:
            modes[mode] = {"order": m["order"], "order_key": m["order_key"]}
            runs = m["runs_checked"]
        else:
            modes[mode] = {"no_rows": True}
    return {"runs": runs, "modes": modes}, {"bounded": exp["bounded"], "notes": exp["notes"]}


def validate(shared: Path, pattern: str) -> None:
    total = 0
    for case_file in sorted((shared / "cases").glob(f"{pattern}.sql")):
        name = case_file.stem
        exp = json.loads((shared / "expected" / f"{name}.json").read_text())
        options, meta = options_of_shared(exp)
        doc = normalize(name, record(case_file, shared / "data", options), meta)
        (Path(tempfile.gettempdir()) / f"validate_{name}.json").write_text(dumps(doc))
        out: list[str] = []
        diff(exp, doc, name, out)
        total += len(out)
        print(f"{name}: {'identical' if not out else f'{len(out)} differences'}")
        for line in out:
            print("   ", line)
    print(f"validation: {total} differences")


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--notes":
        # notes, order claims aside, are judgement: rewrite them without recording again
        for name, meta in json.loads((HERE / "cases.json").read_text()).items():
            path = SQL / "expected" / f"{name}.json"
            if path.exists():
                doc = json.loads(path.read_text())
                doc["notes"] = meta.get("notes", "")
                path.write_text(dumps(doc))
        return
    if args and args[0] == "--validate":
        validate(Path(args[1]), args[2] if len(args) > 2 else "s*")
        return
    cases = json.loads((HERE / "cases.json").read_text())
    patterns = args or ["*"]
    for name, meta in cases.items():
        if not any(fnmatch.fnmatch(name, p) for p in patterns):
            continue
        options = {k: meta[k] for k in ("runs", "modes", "session_explains") if k in meta}
        options.setdefault("runs", 3)
        doc = normalize(name, record(SQL / "cases" / f"{name}.sql", SQL / "data", options), meta)
        (SQL / "expected" / f"{name}.json").write_text(dumps(doc))
        print(f"recorded {name}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("TZ", "UTC")
    main()
