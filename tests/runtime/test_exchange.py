"""Exchanges between vertices: Spark's partitioning and sorting keys, repeatable channel order,
and what a record looks like after crossing one."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flowmagic
from flowmagic.runtime import execute
from flowmagic.runtime.wire import ChannelOrder


def _spark_partition(key: int, partitions: int) -> int:
    """Spark's PythonPartitioner for a Long key: ``Utils.nonNegativeMod(key.toInt, n)``."""
    low = key & 0xFFFFFFFF
    as_int = low - (1 << 32) if low >= 1 << 31 else low
    return as_int % partitions  # Python's % is already non-negative for a positive modulus


@st.composite
def _exchanges(draw):
    parallelism = draw(st.integers(1, 1 << 15))
    producer_parallelisms = draw(st.lists(st.integers(1, 1 << 15), min_size=1, max_size=4))
    offsets, channels = [], 0
    for count in producer_parallelisms:
        offsets.append(channels)
        channels += count
    order = ChannelOrder(parallelism, offsets, channels)
    keys = draw(
        st.lists(
            st.integers(0, len(producer_parallelisms) - 1).flatmap(
                lambda i: st.tuples(
                    st.integers(0, parallelism - 1),
                    st.just(i),
                    st.integers(0, producer_parallelisms[i] - 1),
                    st.integers(0, order.low * order.high - 1),
                )
            ),
            min_size=1,
            max_size=30,
        )
    )
    return order, offsets, keys


@settings(max_examples=300, deadline=None)
@given(_exchanges())
def test_channel_order_partitions_by_consumer_and_sorts_by_channel_then_sequence(exchange) -> None:
    order, offsets, keys = exchange
    encoded = {key: order(key) for key in keys}
    for key, value in encoded.items():
        assert 0 <= value < 1 << 63
        assert _spark_partition(value, order.parallelism) == key[0]
    for consumer in {key[0] for key in keys}:
        mine = [key for key in keys if key[0] == consumer]
        by_long = sorted(mine, key=encoded.__getitem__)
        by_channel = sorted(mine, key=lambda k: (offsets[k[1]] + k[2], k[3]))
        assert [(offsets[k[1]] + k[2], k[3]) for k in by_long] == [(offsets[k[1]] + k[2], k[3]) for k in by_channel]


def test_channel_order_refuses_a_sequence_it_cannot_encode() -> None:
    order = ChannelOrder(3, [0], 2)
    with pytest.raises(OverflowError, match="exchange channel into subtask 1"):
        order((1, 0, 1, order.low * order.high))


class TagSubtask(flowmagic.MapFunction):
    def open(self, runtime_context):
        self.index = runtime_context.get_index_of_this_subtask()

    def map(self, value):
        return (value, self.index)


@pytest.mark.parametrize("mode", ["BATCH", "STREAMING"])
def test_consumers_read_their_channels_in_the_same_order_on_every_run(mode, spark) -> None:
    def run() -> list:
        env = flowmagic.StreamExecutionEnvironment(parallelism=3)
        env.set_runtime_mode(mode)
        tagged = env.from_sequence(1, 3000).map(TagSubtask()).set_parallelism(2)
        tagged.rebalance().map(TagSubtask()).print()
        return execute(env.get_execution_graph(), echo=False).printed

    first = run()
    assert len(first) == 3000
    assert run() == first


def test_a_cyclic_record_crosses_an_exchange(spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    records = []
    for index in range(4):
        record = [index]
        record.append(record)
        records.append(record)
    crossed = env.from_collection(records).rebalance().map(lambda r: (r[0], r[1] is r))
    assert sorted(crossed.execute_and_collect()) == [(0, True), (1, True), (2, True), (3, True)]


@pytest.mark.parametrize("mode", ["BATCH", "STREAMING"])
def test_sum_keeps_the_first_record_and_never_changes_an_input(mode, spark) -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    env.set_runtime_mode(mode)
    data = [("a", [1], "x"), ("b", [5], "z"), ("a", [2], "y"), ("a", [3], "w")]
    results = list(env.from_collection(data).key_by(lambda r: r[0]).sum(1).execute_and_collect())
    if mode == "STREAMING":
        assert [r for r in results if r[0] == "a"] == [("a", [1], "x"), ("a", [1, 2], "x"), ("a", [1, 2, 3], "x")]
        assert [r for r in results if r[0] == "b"] == [("b", [5], "z")]
    else:
        assert sorted(results) == [("a", [1, 2, 3], "x"), ("b", [5], "z")]
    dicts = env.from_collection([{"k": 1, "v": 2.5, "t": "p"}, {"k": 1, "v": 1.0, "t": "q"}])
    summed = list(dicts.key_by(lambda r: r["k"]).sum("v").execute_and_collect())
    assert summed[-1] == {"k": 1, "v": 3.5, "t": "p"}


def test_a_split_readers_counts_are_live_while_it_reads(tmp_path, spark) -> None:
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"w{i} w{i + 1}\n" for i in range(600)))
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.read_text_file(str(path)).flat_map(lambda line: time.sleep(0.004) or line.split()).rebalance().add_sink(
        lambda w: None
    )
    snapshots = []
    execute(env.get_execution_graph(), echo=False, on_progress=lambda m: snapshots.append(m.snapshot()))
    reader_counts = [
        s.records_out
        for snap in snapshots
        for v in snap.vertices
        if v.name.startswith("Split Reader")
        for s in v.subtasks
        if s.state == "RUNNING"
    ]
    assert any(0 < count < 1200 for count in reader_counts), reader_counts


def test_a_sinks_results_travel_to_the_driver_many_to_a_frame_in_the_order_made() -> None:
    import pickle

    from flowmagic.runtime.spark.shuffle import RESULTS_PER_FRAME, ResultFrames
    from flowmagic.runtime.wire import RESULT_SLOT, RESULTS_SLOT

    # Printing every update makes one result per record: a frame (a pickle, a Spark record,
    # an unpickling on the driver) per record cost more than the record's trip through the job.
    printed, other, report = (7, 0), (8, 0), ("@epoch", "v", 0)
    items = [(RESULT_SLOT, printed, (False, f"line {i}")) for i in range(RESULTS_PER_FRAME + 5)]
    # A batch's results come as one list.
    items += [
        (RESULTS_SLOT, printed, [(False, f"line {i}") for i in range(RESULTS_PER_FRAME + 5, 2 * RESULTS_PER_FRAME + 5)])
    ]
    items += [(0, (0, 0, 0, 0), (0, ["exchanged"]))]
    items += [(RESULT_SLOT, other, i) for i in range(3)] + [(RESULT_SLOT, report, {"records_in": 1})]
    frames = [pickle.loads(frame) for frame in ResultFrames(RESULT_SLOT)(iter(items))]
    assert [(key, len(payloads)) for key, payloads in frames] == [
        (printed, RESULTS_PER_FRAME),
        (printed, RESULTS_PER_FRAME + 5),
        (other, 3),
        (report, 1),
    ]
    assert [payload for key, payloads in frames if key == printed for payload in payloads] == [
        (False, f"line {i}") for i in range(2 * RESULTS_PER_FRAME + 5)
    ]


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        ((1, "a"), "(1,a)"),
        ((True, None, 1.5), "(true,null,1.5)"),
        ((-7, ("x", (2, [1, "b"])), {"k": (1, 2)}), "(-7,(x,(2,[1, b])),{k=(1,2)})"),
        ("plain", "plain"),
        (12, "12"),
        ((1.0e20, float("nan"), float("-inf")), "(1e+20,NaN,-Infinity)"),
    ],
)
def test_printed_records_of_ints_strings_and_tuples_print_as_flink_prints_them(value, printed) -> None:
    import enum

    from flowmagic.runtime.records import java_string

    class Level(enum.IntEnum):
        HIGH = 3

    assert java_string(value) == printed
    # A bool is no int to print, and a subclass of int keeps its own str().
    assert java_string((value, True, Level.HIGH)) == f"({printed},true,{Level.HIGH})"
