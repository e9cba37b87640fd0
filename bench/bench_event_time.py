"""Benchmark: event-time work of bounded jobs (watermark generation, timers, windows).

Run: ``.venv/bin/python bench/bench_event_time.py --baseline DIR`` where ``DIR`` is another
checkout of flowmagic (``git worktree add /tmp/base <rev>``). Each case runs on the local
executor (in-process: the operators' own cost, no Spark) in a fresh interpreter, alternately
from this checkout and from the baseline, for ``--rounds`` rounds; the medians and their
ratio (this / baseline) are printed. Without ``--baseline`` only this checkout runs.

Cases (``--records`` records of ``--keys`` keys, timestamps 1 ms apart):
- ``generate``: timestamps and built-in watermarks only (the assigner, then a sink).
- ``map, generate``: a map chained before the assigner, which makes records cross the chain
  one at a time (the assigner reads the wall clock between records).
- ``process timers``: a KeyedProcessFunction registering an event-time timer per record, in
  1 s buckets, so that keys share due times.
- ``tumbling windows``: a 1 s tumbling event-time window summing per key.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

_CASE = r"""
import json, sys, time
import flowmagic
from flowmagic import KeyedProcessFunction, Time, TumblingEventTimeWindows, WatermarkStrategy

case, records, keys = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
env = flowmagic.StreamExecutionEnvironment(parallelism=1)
data = [(i, i % keys) for i in range(records)]
strategy = WatermarkStrategy.for_bounded_out_of_orderness(100).with_timestamp_assigner(lambda e, ts: e[0])
source = env.from_collection(data)
stamped = source.assign_timestamps_and_watermarks(strategy)


class Timers(KeyedProcessFunction):
    def process_element(self, value, ctx, out):
        ctx.timer_service().register_event_time_timer(value[0] - value[0] % 1000 + 999)

    def on_timer(self, timestamp, ctx, out):
        out.collect(timestamp)


if case == "generate":
    result = stamped.filter(lambda e: e[0] < 0)
elif case == "map, generate":
    result = source.map(lambda e: e).assign_timestamps_and_watermarks(strategy).filter(lambda e: e[0] < 0)
elif case == "process timers":
    result = stamped.key_by(lambda e: e[1]).process(Timers())
else:
    result = (stamped.key_by(lambda e: e[1]).window(TumblingEventTimeWindows.of(Time.seconds(1)))
              .reduce(lambda a, b: (a[0], a[1])))
began = time.perf_counter()
count = sum(1 for _ in result.execute_and_collect(executor="local"))
print(json.dumps({"seconds": time.perf_counter() - began, "records_out": count}))
"""

CASES = ["generate", "map, generate", "process timers", "tumbling windows"]


def run(checkout: Path, case: str, records: int, keys: int) -> float:
    environment = {**os.environ, "PYTHONPATH": str(checkout)}
    finished = subprocess.run(
        [sys.executable, "-c", _CASE, case, str(records), str(keys)],
        cwd=checkout,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(finished.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another flowmagic checkout to compare with")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    checkouts = {"this": HERE} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    times: dict[tuple[str, str], list[float]] = {}
    for round_number in range(args.rounds):
        for case in CASES:
            # Alternate which checkout goes first, so that drift on a shared machine
            # does not favour one.
            order = list(checkouts.items())
            if round_number % 2:
                order.reverse()
            for name, checkout in order:
                times.setdefault((case, name), []).append(run(checkout, case, args.records, args.keys))
    print(f"{args.records:,} records, {args.keys:,} keys, medians of {args.rounds} interleaved rounds (s)")
    for case in CASES:
        this = statistics.median(times[(case, "this")])
        line = f"  {case:18s} this {this:6.2f}"
        if args.baseline:
            baseline = statistics.median(times[(case, "baseline")])
            line += f"   baseline {baseline:6.2f}   ratio {this / baseline:5.2f}"
        print(line)


if __name__ == "__main__":
    started = time.time()
    main()
    print(f"({time.time() - started:.0f} s in all)")
