"""The SparkSession a job runs on: the caller's, the active one, or an embedded local one."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

from flowmagic.errors import SparkEnvironmentError

__all__ = ["get_spark_session", "metrics_bind_host"]

_QUIET_LOG4J = os.path.join(os.path.dirname(os.path.dirname(__file__)), "log4j2-quiet.properties")
# Spark adds the incubating Vector API to its JVM, which says so on stderr: in a notebook,
# a red line in the first run's cell about nothing the user can act on.
_JVM_NOISE = b"WARNING: Using incubator modules"
# local[N,F]: F attempts per task. Plain local[*] never retries, so the retry path of the
# runtime (new attempts, results of the successful ones only) would go unused by default.
_EMBEDDED_MASTER = "local[*,4]"
_EMBEDDED_LOCK = threading.Lock()


def get_spark_session(spark: Any = None) -> Any:
    """``spark``, else the active SparkSession, else a new embedded ``local[*,4]`` one.

    Raises :class:`~flowmagic.errors.SparkEnvironmentError` for a Spark Connect session,
    which has no RDD API.
    """
    if spark is None:
        spark = _active_or_default() or _embedded_session()
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        raise SparkEnvironmentError(
            "flowmagic cannot run on a Spark Connect session: it runs each subtask as a Spark task "
            "through the RDD API (SparkContext), which Spark Connect does not offer. Pass a classic "
            "SparkSession (SparkSession.builder.master(...).getOrCreate() without .remote() or "
            "SPARK_REMOTE), or none to use an embedded local one."
        )
    return spark


def _active_or_default() -> Any:
    """The thread's active SparkSession, else the process's default one, else None.

    A job's driver thread (a bounded job's, a ``%flow run --background``'s) has no active
    session of its own: the default one is the session the caller made. Asking the builder
    for it instead costs a py4j call per setting (a fifth of a second on a busy machine,
    before every job) and warns that static settings of a running session are ignored.
    """
    from pyspark.errors import PySparkRuntimeError
    from pyspark.sql import SparkSession

    try:
        return SparkSession.active()
    except PySparkRuntimeError:
        return None


def _java_option(name: str, value: str) -> str:
    # Spark splits extraJavaOptions like a shell: quote, so that a path with spaces stays one option.
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'-D{name}="{escaped}"'


def _embedded_session() -> Any:
    from pyspark.sql import SparkSession

    # Workers must run the notebook's own Python, where flowmagic and its dependencies are.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(_EMBEDDED_MASTER)
        .appName("flowmagic")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.python.worker.reuse", "true")
        # The UI's kill links would end an epoch's Spark job under the continuous job, which
        # then fails; flowmagic's own cancel stops a job cleanly.
        .config("spark.ui.killEnabled", "false")
        # flowmagic reports task failures itself; Spark's JVM stack traces are noise in a cell.
        .config("spark.driver.extraJavaOptions", _java_option("log4j.configurationFile", _QUIET_LOG4J))
    )
    from pyspark import SparkContext

    # Runs in background threads too (``%flow run --background`` twice): one thread starts the
    # JVM, the others get its session. Only a starting JVM's stderr is filtered: fd 2 is the
    # process's, so two threads redirecting it at once would restore each other's pipes.
    with _EMBEDDED_LOCK:
        if SparkContext._active_spark_context is not None:
            session = builder.getOrCreate()
        else:
            with _jvm_stderr_filtered(), _ui_on_loopback(builder):
                session = builder.getOrCreate()
    session.sparkContext.setLogLevel("OFF")
    # The embedded session's Python side is quiet too: a program that logs INFO to stdout
    # (as PyFlink's examples do) would otherwise print py4j's connection notices among its
    # output when the session closes at exit.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    return session


@contextlib.contextmanager
def _ui_on_loopback(builder: Any) -> Iterator[None]:
    """Keep the web UI of a session started inside the block to this machine.

    Spark binds its UI to ``SPARK_LOCAL_IP``, else to every interface (``WebUI.bind``; no
    ``spark.ui.*`` setting chooses the host, and ``spark.driver.bindAddress`` is not used),
    and reads the variable from its JVM's environment: set for the JVM this block starts, so
    that the kernel's other processes do not inherit it. A JVM left running by a stopped
    session kept the environment it started with: then the UI stays off unless the user set
    the variable (their choice, as one set before the block is).
    """
    from pyspark import SparkContext

    jvm = SparkContext._jvm
    if jvm is not None:
        if not jvm.System.getenv("SPARK_LOCAL_IP"):
            builder.config("spark.ui.enabled", "false")
        yield
        return
    if os.environ.get("SPARK_LOCAL_IP"):
        yield
        return
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    try:
        yield
    finally:
        os.environ.pop("SPARK_LOCAL_IP", None)


@contextlib.contextmanager
def _jvm_stderr_filtered() -> Iterator[None]:
    """Give a JVM started inside the block a stderr that drops its incubator-module warning.

    The JVM inherits file descriptor 2 when it starts, so fd 2 points at a pipe meanwhile; a
    thread passes everything else on to the real stderr for as long as the JVM lives.
    """
    try:
        sys.stderr.flush()
        real = os.dup(2)
    except (OSError, ValueError):  # no usable stderr: nothing would show anyway
        yield
        return
    reader, writer = os.pipe()
    os.dup2(writer, 2)
    os.close(writer)
    threading.Thread(target=_forward, args=(reader, real), name="flowmagic-jvm-stderr", daemon=True).start()
    try:
        yield
    finally:
        os.dup2(real, 2)


def _forward(reader: int, target: int) -> None:
    with open(reader, "rb", buffering=0) as source, open(target, "wb", buffering=0) as sink:
        pending = b""
        while chunk := source.read(65536):
            *lines, pending = (pending + chunk).split(b"\n")
            kept = b"".join(line + b"\n" for line in lines if not line.startswith(_JVM_NOISE))
            if kept:
                sink.write(kept)
        if pending and not pending.startswith(_JVM_NOISE):
            sink.write(pending)


def metrics_bind_host(sc: Any) -> str:
    """The address to bind the metrics channel to: the one executors reach the driver at.

    Local-mode workers run on this machine, so loopback. Spark fills ``spark.driver.host``
    with the machine's external address when it was not set, which would open the channel
    to the network for nothing.
    """
    if sc.master.startswith("local"):
        return "127.0.0.1"
    return str(sc.getConf().get("spark.driver.host", "127.0.0.1"))
