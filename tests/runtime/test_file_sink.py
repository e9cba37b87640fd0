"""The file sink on a real local Spark session: part files named per writer as Flink's
FileSink names them, and no in-progress file left behind by a run, failed or not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import flowmagic
from flowmagic import errors


def _run(out: Path, parallelism: int, values: list[int], mapper=None):
    env = flowmagic.StreamExecutionEnvironment(parallelism=parallelism)
    sink = (
        flowmagic.FileSink.for_row_format(str(out), flowmagic.Encoder.simple_string_encoder())
        .with_bucket_assigner(flowmagic.BucketAssigner.base_path_bucket_assigner())
        .build()
    )
    stream = env.from_collection(values)
    if mapper is not None:
        stream = stream.map(mapper)
    stream.sink_to(sink)
    return env.execute()


def _lines(paths) -> list[str]:
    return sorted(line for path in paths for line in Path(path).read_text().splitlines())


def test_a_rerun_at_lower_parallelism_neither_overwrites_nor_mixes_with_the_earlier_run(tmp_path, spark) -> None:
    out = tmp_path / "out"
    first = _run(out, 4, list(range(100)))
    second = _run(out, 2, list(range(1000, 1010)))
    assert _lines(first.committed) == sorted(str(i) for i in range(100))
    assert _lines(second.committed) == sorted(str(i) for i in range(1000, 1010))
    assert len(first.committed) == 4 and len(second.committed) == 2
    assert all(Path(path).name.startswith("part-") and Path(path).name.endswith("-0") for path in second.committed)
    assert sorted(os.listdir(out)) == sorted(Path(path).name for path in first.committed + second.committed)


class FailOnSubtaskOne(flowmagic.MapFunction):
    """Subtask 0 finishes (its file is complete); subtask 1 fails on every attempt."""

    def open(self, runtime_context):
        self.doomed = runtime_context.get_index_of_this_subtask() == 1

    def map(self, value):
        if self.doomed and value > 10:
            raise RuntimeError("disk on fire")
        return value


def test_a_failed_job_leaves_no_in_progress_file(tmp_path, spark) -> None:
    out = tmp_path / "out"
    earlier = _run(out, 2, [1, 2, 3])
    with pytest.raises(errors.JobFailedError, match="disk on fire"):
        _run(out, 2, list(range(100)), FailOnSubtaskOne())
    assert sorted(os.listdir(out)) == sorted(Path(path).name for path in earlier.committed)
