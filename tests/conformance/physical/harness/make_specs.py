"""Write recorder specs (JobGraphs to run) from the conformance fixtures: Flink's own JobGraphs.

    python make_specs.py SPECS_DIR

Cases Flink rejects, and BATCH cases whose parallelism the adaptive batch scheduler decides
(-1 in their JobGraph), are left out. Names the fixtures dropped as nondeterministic (lambda
class names) are replaced: the recorder needs a name, placement does not.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

CONFORMANCE = Path(__file__).resolve().parents[2]


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for folder in ("flink", "oracle"):
        for path in sorted((CONFORMANCE / folder / "expected").glob("*.json")):
            fixture = json.loads(path.read_text())
            if fixture.get("error") or not fixture.get("job_graph"):
                continue
            vertices = fixture["job_graph"]["vertices"]
            if any(vertex["parallelism"] <= 0 for vertex in vertices):
                continue
            for number, vertex in enumerate(vertices):
                vertex.setdefault("name", f"vertex {number}")
            spec = {"case": path.stem, "name": path.stem, "job_type": fixture["stream_graph"]["job_type"]}
            spec["vertices"] = vertices
            (out / f"{path.stem}.json").write_text(json.dumps(spec, indent=1))


if __name__ == "__main__":
    main()
