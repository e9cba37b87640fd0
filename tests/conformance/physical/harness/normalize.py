"""Turn PhysicalRecorder's raw output into the fixtures under ../expected (run outside the tests).

    python normalize.py RAW.json SPECS_DIR CASES_DIR...   # writes ../expected/NAME.json per case

A raw run lists, per subtask attempt, the TaskManager (resource id) and slot (allocation id) it
ran in, the ResultPartitions it wrote and the InputChannels of its InputGates. Ids differ from
run to run, so TaskManagers and slots are numbered by first appearance in topological subtask
order, and result ids are replaced by the producer and consumer vertex ids. The cases of
../cases (Java twins in Programs.java) also keep the JobGraph Flink built for them (the spec
the recorder ran), so that the project's JobGraph is checked against it first.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

KINDS = {
    "LocalRecoveredInputChannel": "LOCAL",
    "LocalInputChannel": "LOCAL",
    "RemoteRecoveredInputChannel": "REMOTE",
    "RemoteInputChannel": "REMOTE",
    "UnknownInputChannel": "UNKNOWN",
}


def normalize_run(run: dict) -> dict:
    if run["status"] != "FINISHED":
        return {"status": run["status"], "error": run["error_chain"][-1]}
    producer_of, consumer_of = {}, {}
    for subtask in run["subtasks"]:
        for partition in subtask["partitions"]:
            producer_of[partition["dataset"]] = subtask["vertex"]
        for gate in subtask["gates"]:
            for channel in gate["channels"]:
                consumer_of[channel["dataset"]] = subtask["vertex"]
    taskmanagers: dict[str, int] = {}
    slots: dict[str, int] = {}
    subtasks = []
    for subtask in run["subtasks"]:
        assert subtask["attempt"] == 0, subtask
        subtasks.append(
            {
                "vertex": subtask["vertex"],
                "index": subtask["subtask"],
                "taskmanager": taskmanagers.setdefault(subtask["taskmanager"], len(taskmanagers)),
                "slot": slots.setdefault(subtask["allocation"], len(slots)),
                "partitions": [
                    [consumer_of[p["dataset"]], p["subpartitions"], p["type"]] for p in subtask["partitions"]
                ],
                "gates": [
                    [
                        producer_of[gate["channels"][0]["dataset"]],
                        [
                            [c["partition"], *json.loads(c["subpartitions"]), KINDS[c["class"]]]
                            for c in gate["channels"]
                        ],
                    ]
                    for gate in subtask["gates"]
                ],
            }
        )
    return {"status": "FINISHED", "subtasks": subtasks}


def dumps(document: dict) -> str:
    """Indented JSON with each subtask and job vertex on one line: diffs stay readable."""
    compact: list[str] = []

    def placeholder(item: dict) -> str:
        compact.append(json.dumps(item))
        return f"@@{len(compact) - 1}@@"

    shaped = json.loads(json.dumps(document))
    for runs in shaped["configurations"].values():
        for run in runs:
            run["subtasks"] = [placeholder(subtask) for subtask in run.get("subtasks", [])] or run.pop("subtasks", None)
            if run["subtasks"] is None:
                del run["subtasks"]
    if "job_graph" in shaped:
        shaped["job_graph"] = [placeholder(vertex) for vertex in shaped["job_graph"]]
    text = json.dumps(shaped, indent=1)
    for number, item in enumerate(compact):
        text = text.replace(f'"@@{number}@@"', item, 1)
    return text


def main() -> None:
    raw = json.loads(Path(sys.argv[1]).read_text())
    specs = Path(sys.argv[2])
    sources = {path.stem: path for folder in sys.argv[3:] for path in Path(folder).glob("*.py")}
    expected = Path(__file__).resolve().parent.parent / "expected"
    conformance = Path(__file__).resolve().parents[2]
    for case, configs in raw.items():
        document = {
            "case": case,
            "flink_version": "2.3.0",
            "source": sources[case].resolve().relative_to(conformance).as_posix(),
            "configurations": {
                config: [normalize_run(run) for run in runs] for config, runs in configs.items()
            },
        }
        if sources[case].parent.resolve() == expected.parent / "cases":
            document["job_graph"] = json.loads((specs / f"{case}.json").read_text())["vertices"]
        (expected / f"{case}.json").write_text(dumps(document) + "\n")


if __name__ == "__main__":
    main()
