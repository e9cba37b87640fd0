"""PyFlink's sources: ``env.from_source`` with ``FileSource`` (static, and monitored in the
continuous mode) and ``NumberSequenceSource``; ``add_source`` of a Java function refused.

Graph shapes are checked against Flink 2.3 in ``conformance/oracle`` (x70-x73) and records in
``conformance/runtime_oracle`` (r80); these tests cover what those cannot: files appearing
while a job runs, and a job restored from a retained checkpoint of another.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from flowmagic.common import Duration, WatermarkStrategy
from flowmagic.datastream import SourceFunction, StreamExecutionEnvironment
from flowmagic.datastream.connectors import FileSource, NumberSequenceSource, StreamFormat
from flowmagic.errors import FlowError, JobFailedError, UnsupportedFeatureError
from flowmagic.vocabulary.configuration import Configuration

TEXT = StreamFormat.text_line_format()


def _env(parallelism: int = 2) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    return env


@pytest.mark.parametrize("executor", ["local", pytest.param("spark", marks=pytest.mark.e2e)])
def test_a_file_source_reads_every_visible_file_once_with_javas_line_endings(
    tmp_path: Path, executor: str, request: pytest.FixtureRequest
) -> None:
    if executor == "spark":
        request.getfixturevalue("spark")
    (tmp_path / "nested").mkdir()
    (tmp_path / "a.txt").write_bytes(b"one\r\ntwo\rthree\n\nfour")
    (tmp_path / "nested" / "b.txt").write_bytes("ünf\n".encode())
    (tmp_path / "_SUCCESS").write_text("skipped")
    (tmp_path / ".b.txt.crc").write_text("skipped")
    (tmp_path / "c.txt").write_bytes(b"")
    source = FileSource.for_record_stream_format(TEXT, str(tmp_path)).build()
    lines = _env(3).from_source(source, WatermarkStrategy.no_watermarks(), "files")
    assert sorted(lines.execute_and_collect(executor=executor)) == sorted(["one", "two", "three", "", "four", "ünf"])


def test_a_file_source_takes_several_paths_and_file_uris(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("x\n")
    (tmp_path / "y.txt").write_text("y\n")
    source = FileSource.for_record_stream_format(TEXT, str(tmp_path / "x.txt"), f"file://{tmp_path / 'y.txt'}").build()
    lines = _env().from_source(source, WatermarkStrategy.no_watermarks(), "files")
    assert sorted(lines.execute_and_collect(executor="local")) == ["x", "y"]


def test_a_missing_path_fails_the_job_with_flinks_message(tmp_path: Path) -> None:
    source = FileSource.for_record_stream_format(TEXT, str(tmp_path / "nothing")).build()
    lines = _env().from_source(source, WatermarkStrategy.no_watermarks(), "files")
    with pytest.raises(JobFailedError, match="does not exist"):
        list(lines.execute_and_collect(executor="local"))


def test_number_sequence_source_splits_the_sequence_as_from_sequence() -> None:
    env = _env(3)
    numbers = env.from_source(NumberSequenceSource(1, 10), WatermarkStrategy.no_watermarks(), "numbers")
    numbers.print()
    assert env.get_stream_graph().nodes[numbers.transformation.id].name == "Source: numbers"
    assert sorted(numbers.execute_and_collect(executor="local")) == list(range(1, 11))
    with pytest.raises(FlowError, match="'from' must be <= 'to'"):
        NumberSequenceSource(5, 1)


def test_sources_and_builders_refuse_what_they_cannot_do(tmp_path: Path) -> None:
    builder = FileSource.for_record_stream_format(TEXT, str(tmp_path))
    with pytest.raises(FlowError, match="discovery interval must be > 0"):
        builder.monitor_continuously(Duration.of_millis(0))
    with pytest.raises(UnsupportedFeatureError, match="Parquet"):
        FileSource.for_bulk_file_format(None, str(tmp_path))
    with pytest.raises(UnsupportedFeatureError, match="no Java code"):
        SourceFunction("org.example.MySource")
    with pytest.raises(UnsupportedFeatureError, match="no Java code"):
        _env().add_source("org.example.MySource")
    with pytest.raises(FlowError, match="expects a FileSource, NumberSequenceSource or DataGeneratorSource"):
        _env().from_source([1, 2], WatermarkStrategy.no_watermarks(), "list")
    remote = FileSource.for_record_stream_format(TEXT, "s3a://bucket/in").build()
    with pytest.raises(JobFailedError, match="local paths"):
        list(_env().from_source(remote, WatermarkStrategy.no_watermarks(), "s3").execute_and_collect(executor="local"))


def test_a_monitored_file_source_is_unbounded() -> None:
    source = FileSource.for_record_stream_format(TEXT, "/tmp").monitor_continuously(Duration.of_seconds(1)).build()
    env = _env()
    env.from_source(source, WatermarkStrategy.no_watermarks(), "files").print()
    assert env.get_stream_graph().job_type == "STREAMING"
    assert not source.is_bounded()
    builder = FileSource.for_record_stream_format(TEXT, "/tmp").monitor_continuously(Duration.of_seconds(1))
    assert builder.process_static_file_set().build().is_bounded()


def _wait_for(condition: Callable[[], bool], job, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while not condition():
        assert not job.get_job_status().is_globally_terminal, f"the job ended: {job}"
        assert time.time() < deadline, f"timed out waiting for {job}"
        time.sleep(0.1)


def _drop(directory: Path, name: str, text: str) -> None:
    # Written beside the directory and moved in, as Flink's docs advise for monitored paths.
    staging = directory.parent / f".{name}.staging"
    staging.write_text(text)
    os.replace(staging, directory / name)


@pytest.mark.e2e
def test_a_monitored_file_source_reads_new_files_once_across_runs(spark, tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    _drop(inbox, "1.txt", "a b\nb\n")
    printed: list[str] = []

    def start(parallelism: int, restore: str | None = None):
        configuration = Configuration().set_string("parallelism.default", str(parallelism))
        configuration.set_string("execution.checkpointing.interval", "200 ms")
        configuration.set_string("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
        if restore is not None:
            configuration.set_string("execution.savepoint.path", restore)
        env = StreamExecutionEnvironment.get_execution_environment(configuration)
        env.get_checkpoint_config().set_checkpoint_storage(f"file://{tmp_path / 'checkpoints'}")
        source = (
            FileSource.for_record_stream_format(TEXT, str(inbox)).monitor_continuously(Duration.of_millis(200)).build()
        )
        words = env.from_source(source, WatermarkStrategy.no_watermarks(), "inbox").flat_map(str.split)
        words.map(lambda word: (word, 1)).key_by(lambda pair: pair[0]).reduce(lambda x, y: (x[0], x[1] + y[1])).print()
        from flowmagic import compile as passes
        from flowmagic.runtime import start_continuous

        graph = passes.build(env.get_stream_graph("inbox")).execution_graph
        return start_continuous(
            graph,
            options=env.continuous_options(),
            on_output=lambda output: printed.extend(line.split("> ", 1)[1] for _err, line in output.printed),
        )

    job = start(2)
    _wait_for(lambda: len(printed) == 3, job)
    _drop(inbox, "2.txt", "a\nc\n")
    _wait_for(lambda: len(printed) == 5, job)
    checkpoints = job.checkpoints.completed
    _wait_for(lambda: job.checkpoints.completed >= checkpoints + 2, job)
    job.cancel()
    # A job restored from the first one's retained checkpoint (at another parallelism)
    # reads only the file that came since.
    _drop(inbox, "3.txt", "c\n")
    (retained,) = (tmp_path / "checkpoints" / job.get_job_id()).glob("chk-*")
    resumed = start(3, str(retained))
    _wait_for(lambda: len(printed) == 6, resumed)
    time.sleep(1.5)  # several discovery intervals: nothing is read again
    resumed.cancel()
    assert sorted(printed[:3]) == ["('a', 1)", "('b', 1)", "('b', 2)"]
    assert sorted(printed[3:5]) == ["('a', 2)", "('c', 1)"]
    assert printed[5:] == ["('c', 2)"]


# A PyFlink program in the shape of PyFlink's examples word_count.py (with --input: FileSource) and
# process_json_data.py, written for PyFlink; run with /work/pyflink-venv's PyFlink 2.3.0 it printed
# PYFLINK_FILES_PRINTED. (PyFlink's own examples, imports changed, also print what PyFlink printed:
# word_count.py --input on a 35-line file, 187 lines alike; process_json_data.py alike but for the
# subtask prefix, which Flink's random rebalance start makes 1> or 2>.)
PYFLINK_FILES_PROGRAM = """
import json
import os
import sys

from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSource, StreamFormat

directory = sys.argv[1]
os.makedirs(os.path.join(directory, "in"), exist_ok=True)
with open(os.path.join(directory, "in", "lines.txt"), "w") as file:
    file.write(
        "the quick brown fox jumps over the lazy dog\\nThe dog sleeps; the fox runs\\r\\n"
        "a fox, a dog and THE end\\n"
    )


def tokens(line):
    yield from line.split()


env = StreamExecutionEnvironment.get_execution_environment()
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
env.set_parallelism(1)
source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), os.path.join(directory, "in"))
files = source.process_static_file_set().build()
counts = (
    env.from_source(files, WatermarkStrategy.for_monotonous_timestamps(), "file_source")
    .flat_map(tokens)
    .map(lambda word: (word, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
    .key_by(lambda pair: pair[0])
    .reduce(lambda a, b: (a[0], a[1] + b[1]))
)
counts.print()
env.execute("word count from files")

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
people = env.from_collection(
    [
        (1, '{"name": "Ada", "city": "London", "visits": 3}'),
        (2, '{"name": "Grace", "city": "Arlington", "visits": 5}'),
        (3, '{"name": "Linus", "city": "Helsinki", "visits": 1}'),
    ]
)


def parse(record):
    document = json.loads(record[1])
    document["visits"] += 1
    return record[0], document


people.map(parse).filter(lambda record: record[1]["visits"] > 2).print()
env.execute()
"""

PYFLINK_FILES_PRINTED = """
(a,2)
(THE,1)
(The,1)
(and,1)
(dog,3)
(end,1)
(fox,2)
(the,3)
(fox,,1)
(lazy,1)
(over,1)
(runs,1)
(brown,1)
(jumps,1)
(quick,1)
(sleeps;,1)
(1, {'name': 'Ada', 'city': 'London', 'visits': 4})
(2, {'name': 'Grace', 'city': 'Arlington', 'visits': 6})
"""


@pytest.mark.e2e
def test_a_pyflink_program_reading_files_prints_what_pyflink_printed(spark, tmp_path: Path) -> None:
    # As a script (``__main__``: its functions pickle by value) on the test session's Spark;
    # a script starting Spark of its own is test_pyflink_compat's word count.
    source = PYFLINK_FILES_PROGRAM.replace("from pyflink", "from flowmagic")
    printed, argv = io.StringIO(), sys.argv
    sys.argv = ["files_program.py", str(tmp_path / "data")]
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(source, "files_program.py", "exec"), {"__name__": "__main__"})
    finally:
        sys.argv = argv
    assert printed.getvalue() == PYFLINK_FILES_PRINTED.lstrip("\n")
