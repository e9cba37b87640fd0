"""How long routing a PyFlink program's untyped ``key_by`` keys takes: ``pyflink_key_hash``
of 100,000 keys each of str, int, tuple, and of Rows (which take a slower pickler): 100,000
distinct ones, and 1,000 distinct ones recurring 100 times each, as a stream's keys recur.

Run with ``.venv/bin/python bench/bench_pyflink_keys.py [--runs N] [--before FILE]``. With
``--before``, another version of ``flowmagic/runtime/pyflink_keys.py`` (say, from
``git show REV:flowmagic/runtime/pyflink_keys.py``) runs in the same interleaved rounds (a
shared machine's drifting speed affects both alike), and each kind's ratio of this version's
median to that one's is printed. Times are the process's CPU time (the machine is shared).
Target: keys of built-in types no slower than before (ratio within the rounds' noise of 1).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flowmagic.runtime.pyflink_keys import pyflink_key_hash
from flowmagic.vocabulary.types import PICKLED, Row, TypeInformation

COUNT = 100_000
KEYS: dict[str, list[Any]] = {
    "str": [f"word{i}" for i in range(COUNT)],
    "int": list(range(-COUNT // 2, COUNT // 2)),
    "tuple": [(f"k{i}", i) for i in range(COUNT)],
    "Row": [Row(f"k{i}", i) for i in range(COUNT)],
    "Row x100": [Row(f"k{i % 1000}", i % 1000) for i in range(COUNT)],
}


KeyHash = Callable[[Any, TypeInformation], int]


def _load(path: str) -> KeyHash:
    spec = importlib.util.spec_from_file_location("pyflink_keys_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.pyflink_key_hash  # type: ignore[no-any-return]


def _time(key_hash: KeyHash, keys: list[Any]) -> float:
    start = time.process_time()
    for key in keys:
        key_hash(key, PICKLED)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--before", help="another version of pyflink_keys.py to compare with")
    args = parser.parse_args()
    cases = {"now": pyflink_key_hash}
    if args.before:
        cases["before"] = _load(args.before)
    times: dict[tuple[str, str], list[float]] = {(c, k): [] for c in cases for k in KEYS}
    for keys in KEYS.values():
        for case in cases.values():
            _time(case, keys[:1000])
    for _ in range(args.runs):
        for kind, keys in KEYS.items():
            for name, case in cases.items():
                times[name, kind].append(_time(case, keys))
    for kind in KEYS:
        medians = {name: statistics.median(times[name, kind]) for name in cases}
        line = "   ".join(f"{name} {median * 1e3:8.1f} ms" for name, median in medians.items())
        if "before" in medians:
            line += f"   ratio {medians['now'] / medians['before']:.3f}"
        print(f"{kind:9} {line}")


if __name__ == "__main__":
    main()
