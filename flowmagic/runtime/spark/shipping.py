"""flowmagic itself, shipped to executors that do not have it installed (a cluster).

Executors need nothing but PySpark: flowmagic comes as a zip, and nothing it imports there
is outside the standard library and PySpark. A probe job checks once per SparkContext that
the workers' Python can import it, so that a worker of another Python version fails with
the fix rather than as a failed subtask.
"""

from __future__ import annotations

import importlib
import importlib.util
import marshal
import os
import re
import sys
import threading
import zipfile
from collections.abc import Callable
from typing import Any

from flowmagic.errors import SparkEnvironmentError

__all__ = ["ship_flowmagic"]

_SHIPPED: set[str] = set()
_ARROW_CHECKED: set[str] = set()
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A job and the warm-up (flowmagic.runtime.spark.warmup) may ship at once: one ships and
# probes, the other then finds it done.
_LOCK = threading.Lock()


def ship_flowmagic(sc: Any, *, arrow: bool = False) -> None:
    """Add flowmagic as a zip to ``sc``'s Python path and check the workers, once per SparkContext.

    ``arrow``: also check that the workers have ``pyarrow``, through which the continuous
    mode's subtasks read and write their state.
    """
    with _LOCK:
        ship = sc.applicationId not in _SHIPPED
        check_arrow = arrow and sc.applicationId not in _ARROW_CHECKED
        if ship:
            _ship(sc)
        if ship or check_arrow:
            # One probe job for both (each costs a Spark job, and the first a Python worker's
            # start): the probe is flowmagic's, so a worker imports flowmagic to run it.
            _check_workers(sc, _with_arrow if check_arrow else _on_worker)
        _SHIPPED.add(sc.applicationId)
        if check_arrow:
            _ARROW_CHECKED.add(sc.applicationId)


def _ship(sc: Any) -> None:
    from pyspark import SparkFiles

    # Inside the SparkContext's own files directory, which Spark deletes when it stops: the
    # driver serves the zip from here to executors for as long as the context lives.
    directory = os.path.join(SparkFiles.getRootDirectory(), "flowmagic-shipped")
    os.makedirs(directory, exist_ok=True)
    archive = os.path.join(directory, "flowmagic.zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bundle:
        for root, directories, files in os.walk(_PACKAGE):
            directories[:] = [d for d in directories if d != "__pycache__"]
            for name in files:
                path = os.path.join(root, name)
                inside = os.path.relpath(path, os.path.dirname(_PACKAGE))
                bundle.write(path, inside)
                if name.endswith(".py"):
                    # Beside its source, which tracebacks show: a worker's import from the zip
                    # takes the pyc, where it would compile the source in every new Python
                    # worker (a fifth of a second of CPU each for the modules a subtask needs).
                    bundle.writestr(inside + "c", _pyc(path, os.path.join(archive, inside)))
    sc.addPyFile(archive)


def _pyc(path: str, shown_as: str) -> bytes:
    """The module at ``path`` compiled by this Python, as a pyc that is not checked against
    its source (PEP 552's unchecked hash: the zip's sources never change), from this
    process's own cache of it when that is current. Workers of another Python version (of
    another magic number) compile the source instead; PySpark refuses them anyway."""
    with open(path, "rb") as file:
        source = file.read()
    try:
        with open(importlib.util.cache_from_source(path), "rb") as file:
            cached = file.read()
    except OSError:
        cached = b""
    status = os.stat(path)
    header = (
        importlib.util.MAGIC_NUMBER
        + (0).to_bytes(4, "little")
        + (int(status.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
        + (status.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    )
    current = cached[:16] == header
    code = cached[16:] if current else marshal.dumps(compile(source, shown_as, "exec", dont_inherit=True))
    return importlib.util.MAGIC_NUMBER + (0b01).to_bytes(4, "little") + importlib.util.source_hash(source) + code


def _on_worker(value: Any) -> Any:
    # Pickled by reference, so running it imports flowmagic on the worker as a subtask would.
    return value


def _with_arrow(value: Any) -> Any:
    importlib.import_module("pyarrow")
    return value


def _check_workers(sc: Any, probe: Callable[[Any], Any]) -> None:
    try:
        sc.parallelize([0], 1).map(probe).collect()
    except Exception as error:
        raise SparkEnvironmentError(_worker_problem(str(error), sc)) from None


def _worker_problem(error: str, sc: Any) -> str:
    driver = f"{sys.version_info.major}.{sys.version_info.minor}"
    python = sc.pythonExec
    fix = (
        f"Set PYSPARK_PYTHON (or spark.pyspark.python) to a Python {driver} with PySpark before the "
        f"SparkSession is created (on this machine: PYSPARK_PYTHON={sys.executable}), or install "
        f"Python {driver} on the workers."
    )
    mismatch = re.search(r"different version\W+(\d+)\W+(\d+)", error)
    if mismatch:
        worker = f"{mismatch.group(1)}.{mismatch.group(2)}"
        return (
            f"Spark's Python workers run Python {worker} ({python!r}), but this driver runs Python "
            f"{driver}, and PySpark needs the same minor version on both. {fix}"
        )
    missing = re.search(r"No module named '([^']+)'", error)
    if missing and missing.group(1).startswith("pyarrow"):
        return (
            f"Spark's Python workers ({python!r}) have no pyarrow, through which the subtasks of a "
            "continuous job read and write their state: install it there, e.g. pip install "
            f"'pyspark[sql]=={_pyspark_version()}'."
        )
    if missing:
        detail = f"the module {missing.group(1)!r} is missing there"
    else:
        # The Python exception the worker raised, not the JVM stack trace around it.
        raised = re.findall(r"^\S*(?:Error|Exception)\b.*$", error, re.MULTILINE)
        detail = raised[-1] if raised else error.strip().splitlines()[0]
    return f"Spark's Python workers ({python!r}) cannot run flowmagic: {detail}. {fix}"


def _pyspark_version() -> str:
    import pyspark

    return pyspark.__version__
