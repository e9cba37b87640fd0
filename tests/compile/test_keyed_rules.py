"""Flink's rules for keyed streams that the conformance cases pin down, checked one by one:
which repartitionings a KeyedStream rejects, operator names chosen by the function's class,
the timers a plain ProcessFunction may not set, and BATCH's order of keys."""

from __future__ import annotations

import pytest

import flowmagic
from flowmagic import errors
from flowmagic.api.datastream import KeyedStream
from flowmagic.runtime.sorting import serialized_key


def _keyed(parallelism: int = 2) -> KeyedStream:
    env = flowmagic.StreamExecutionEnvironment(parallelism=parallelism)
    return env.from_sequence(1, 10).key_by(lambda x: x % 3)


@pytest.mark.parametrize(
    "repartition",
    [
        lambda s: s.rebalance(),
        lambda s: s.shuffle(),
        lambda s: s.rescale(),
        lambda s: s.broadcast(),
        lambda s: s.forward(),
        lambda s: s.global_(),
        lambda s: s.partition_custom(lambda key, n: key % n, lambda x: x),
    ],
    ids=["rebalance", "shuffle", "rescale", "broadcast", "forward", "global", "partition_custom"],
)
def test_a_keyed_stream_cannot_be_repartitioned(repartition) -> None:
    with pytest.raises(errors.ProgramError, match=r"^Cannot override partitioning for KeyedStream\.$"):
        repartition(_keyed())


def test_a_keyed_stream_can_be_keyed_again_and_its_operators_repartitioned() -> None:
    keyed = _keyed()
    assert isinstance(keyed.key_by(lambda x: x % 2), KeyedStream)
    assert keyed.map(lambda x: x).rebalance().get_name() == "Partition"


class Plain(flowmagic.ProcessFunction):
    def process_element(self, value, ctx, out):
        out.collect(value)


class Keyed(flowmagic.KeyedProcessFunction):
    def process_element(self, value, ctx, out):
        out.collect(value)


class CoPlain(flowmagic.CoProcessFunction):
    def process_element1(self, value, ctx, out):
        out.collect(value)

    def process_element2(self, value, ctx, out):
        out.collect(value)


class CoKeyed(flowmagic.KeyedCoProcessFunction, CoPlain):
    pass


def test_process_on_a_keyed_stream_is_named_by_the_function_class() -> None:
    keyed = _keyed()
    assert keyed.process(Plain()).get_name() == "Process"
    assert keyed.process(Keyed()).get_name() == "KeyedProcess"
    # A plain callable has no class to tell: the stream's shape decides.
    assert keyed.process(lambda value, ctx, out: None).get_name() == "KeyedProcess"


def test_co_process_is_named_by_the_function_class() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=2)
    first = env.from_sequence(1, 10)
    second = env.from_collection([1, 2, 3])
    both = first.key_by(lambda x: x % 2).connect(second.key_by(lambda x: x % 2))
    assert both.process(CoPlain()).get_name() == "Co-Process"
    assert both.process(CoKeyed()).get_name() == "Co-Keyed-Process"
    assert first.connect(second).process(CoPlain()).get_name() == "Co-Process"
    message = r"^KeyedCoProcessFunction can only be used when both input streams are of type KeyedStream\.$"
    with pytest.raises(errors.ProgramError, match=message):
        first.key_by(lambda x: x % 2).connect(second).process(CoKeyed())


def test_a_plain_process_function_on_a_keyed_stream_has_state_but_no_timers() -> None:
    class Counting(flowmagic.ProcessFunction):
        def open(self, runtime_context):
            self.count = runtime_context.get_state(flowmagic.ValueStateDescriptor("count"))

        def process_element(self, value, ctx, out):
            self.count.update((self.count.value() or 0) + 1)
            out.collect((value % 3, self.count.value()))

    counts = list(_keyed(1).process(Counting()).execute_and_collect(executor="local"))
    assert max(counts) == (2, 3)

    class Timing(flowmagic.ProcessFunction):
        def process_element(self, value, ctx, out):
            ctx.timer_service().register_event_time_timer(5)

    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.from_sequence(1, 3).key_by(lambda x: x).process(Timing()).print()
    with pytest.raises(errors.JobFailedError, match="Setting timers is only supported on a keyed streams"):
        env.execute(executor="local")


def test_batch_orders_keys_by_their_serialized_bytes_compared_signed() -> None:
    ints = [300, -1, 2, 0, -300, 1, 2**40, -(2**40)]
    assert sorted(ints[:6], key=serialized_key) == [-300, -1, 0, 1, 2, 300]
    # Keys beyond 32 bits are Longs: 8 bytes, ordered among themselves.
    assert sorted(ints[6:], key=serialized_key) == [-(2**40), 2**40]
    # Strings: the length first, then the UTF-16 units; units >= 0x80 lead with a "negative" byte.
    words = ["zz", "a", "ab", "Z", "é", "ü", "b"]
    assert sorted(words, key=serialized_key) == ["é", "ü", "Z", "a", "b", "ab", "zz"]
    assert sorted([("b", 1), ("a", 2), ("a", 1)], key=serialized_key) == [("a", 1), ("a", 2), ("b", 1)]
    assert serialized_key(False) < serialized_key(True)
    assert serialized_key([1]) is None
    assert serialized_key(("a", None)) is None


def test_batch_keyed_operators_see_keys_in_flinks_order() -> None:
    env = flowmagic.StreamExecutionEnvironment(parallelism=1)
    env.set_runtime_mode(flowmagic.RuntimeExecutionMode.BATCH)
    words = ["bb", "a", "ccc", "b", "a", "aa"]
    seen = env.from_collection(words).key_by(lambda w: w).map(lambda w: w)
    assert list(seen.execute_and_collect(executor="local")) == ["a", "a", "b", "aa", "bb", "ccc"]
