"""The base of runtime operators: records in, records out, and the user functions' lifecycle.

An operator receives ``process(value, timestamp)`` (``side`` 1/2 for two-input ones),
``process_batch(values)`` for runs of records without timestamps (the fast path of
stateless operators), ``process_watermark(wm)`` and ``end_input()``, and emits through its
:class:`Output`. The user function objects it holds (``user_functions``) are opened before
the first record and closed after the last, here, for every operator alike.
"""

from __future__ import annotations

import reprlib
import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flowmagic.graph.operator_params import OperatorParams
from flowmagic.runtime.clock import WALL_CLOCK, Clock
from flowmagic.runtime.failures import call_site_frame, describe
from flowmagic.runtime.operators.context import KeyedStateBackend, RuntimeContext
from flowmagic.runtime.records import MIN_WATERMARK
from flowmagic.runtime.user_metrics import MetricGroup, MetricRegistry
from flowmagic.vocabulary.dialect import JAVA, ApiDialect

__all__ = ["KeySelectorError", "Operator", "Output", "TaskInfo", "UserFunctionError", "user_traceback"]

_PACKAGE_DIR = str(Path(__file__).resolve().parent.parent)
_record_repr = reprlib.Repr()
_record_repr.maxstring = 80
_record_repr.maxother = 80


@dataclass(frozen=True)
class TaskInfo:
    """The subtask an operator runs in."""

    vertex_name: str
    index: int
    parallelism: int
    max_parallelism: int
    attempt: int
    batch: bool
    #: Where processing time comes from (the wall clock, or a continuous job's epoch time).
    clock: Clock = field(default=WALL_CLOCK, compare=False)
    #: Whether periodic watermark emission follows the clock's epochs (a continuous job:
    #: when its epoch time moves on) rather than the wall clock between records.
    periodic_watermarks: bool = False
    #: The user metrics of the subtask's operators (``get_metrics_group()``).
    metrics: MetricRegistry = field(default_factory=MetricRegistry, compare=False)
    #: The job's global parameters (``get_job_parameter``).
    job_parameters: dict[str, str] = field(default_factory=dict, compare=False)
    #: ``pipeline.auto-watermark-interval``: how often periodic generators emit (0: never).
    auto_watermark_interval_ms: int = 200
    #: The API dialect of the job's program: its functions see what that API's see where
    #: PyFlink differs from Java (``ctx.timestamp()`` of a record without one).
    dialect: ApiDialect = JAVA
    #: A continuous job's run (None: a bounded job): what a retried epoch must name alike
    #: (its clock is the epoch's logged time) is drawn from it, not at random.
    run_id: str | None = None

    @property
    def subtask_name(self) -> str:
        return f"{self.vertex_name} ({self.index + 1}/{self.parallelism})"


class UserFunctionError(Exception):
    """A user function raised: carries plain-data details for the driver to show."""

    def __init__(self, details: dict[str, Any]):
        super().__init__(details["summary"])
        self.details = details


class KeySelectorError(Exception):
    """A record's key could not be selected or routed: the ``key_by`` (or ``partition_custom``,
    the ``method``) written at ``call_site`` is the culprit, whichever operator evaluated it."""

    def __init__(self, method: str, call_site: str | None, error: Exception):
        super().__init__(describe(error))
        self.method = method
        self.call_site = call_site
        self.error = error

    @property
    def where(self) -> str:
        return f"{self.method}()" + (f" at {self.call_site}" if self.call_site else "")


def user_traceback(error: BaseException) -> list[str]:
    """The traceback lines of the user's own frames (flowmagic's and the stdlib's dropped)."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith(_PACKAGE_DIR) and not frame.filename.startswith(sys.prefix)
    ]
    text = "".join(traceback.format_list(frames)) + describe(error)
    return text.rstrip("\n").split("\n")


class Output:
    """Where an operator's records go: chained operators, exchanges, side-output branches."""

    def __init__(self) -> None:
        self.targets: list[Callable[[Any, int | None], None]] = []
        self.batch_targets: list[Callable[[list[Any]], None]] = []
        self.side_targets: dict[str, list[Callable[[Any, int | None], None]]] = {}
        self.watermark_targets: list[Callable[[int], None]] = []
        self.status_targets: list[Callable[[bool], None]] = []
        self.collect: Callable[[Any, int | None], None] = self._fan_out
        #: What each record becomes first (the operator's declared Row or Tuple type), if anything.
        self.convert: Callable[[Any], Any] | None = None
        self.collect_batch: Callable[[list[Any]], None] = self._fan_out_batch

    def seal(self) -> None:
        """Bind the fast single-target paths once all targets are known."""
        if len(self.targets) == 1:
            self.collect = self.targets[0]
        if len(self.batch_targets) == 1:
            self.collect_batch = self.batch_targets[0]
        if self.convert is not None:
            collect, collect_batch, convert = self.collect, self.collect_batch, self.convert
            self.collect = lambda value, timestamp: collect(convert(value), timestamp)
            self.collect_batch = lambda values: collect_batch([convert(value) for value in values])

    def _fan_out(self, value: Any, timestamp: int | None) -> None:
        for target in self.targets:
            target(value, timestamp)

    def _fan_out_batch(self, values: list[Any]) -> None:
        for target in self.batch_targets:
            target(values)

    def side(self, tag: str, value: Any, timestamp: int | None) -> None:
        for target in self.side_targets.get(tag, ()):
            target(value, timestamp)

    def emit_watermark(self, watermark: int) -> None:
        for target in self.watermark_targets:
            target(watermark)

    def emit_watermark_status(self, idle: bool) -> None:
        """Flink's ``WatermarkStatus``: idle (True) or active again (False)."""
        for target in self.status_targets:
            target(idle)


class Operator:
    """Base of runtime operators: stateless pass-through of watermarks."""

    keyed = False
    #: Sinks set this: the task then gives them ``emit_result(payload)`` for the driver.
    emits_results = False
    #: Keyed reductions set this: a BATCH exchange into them folds records before sending.
    combinable = False
    #: Given by the task to operators that emit results: hands a result to the driver.
    emit_result: Callable[[Any], None]
    #: Given with it: hands a list of results to the driver, in order (a batch's, at once).
    emit_results: Callable[[list[Any]], None]
    #: Operators whose keyed state changes only for keys they record (see
    #: :meth:`track_changes`) set this: their snapshots can be incremental.
    tracks_changes = False
    #: How a restore at another parallelism hands out this operator's operator state:
    #: split (each old subtask's to exactly one new subtask, round-robin, as Flink's
    #: ``SPLIT_DISTRIBUTE`` list state) or, by default, broadcast (every new subtask gets an
    #: old subtask's copy, as Flink's broadcast state).
    splits_operator_state = False
    #: The keys whose state changed since the last snapshot (None: not recorded).
    changed_keys: set[Any] | None = None
    #: Operators that act on the wall clock between records (periodic watermark generators
    #: of a bounded job) set how often (s): the task then keeps the batches through their
    #: chain short against it.
    wall_clock_interval: float | None = None

    def __init__(self, name: str, params: OperatorParams, task: TaskInfo):
        self.name = name
        self.task = task
        self.output = Output()
        self.backend = KeyedStateBackend() if self.keyed else None
        # As in Flink, a function's task is the whole chain (the vertex), not its operator.
        self.runtime_context = RuntimeContext(
            task.vertex_name,
            task.index,
            task.parallelism,
            task.max_parallelism,
            task.attempt,
            self.backend,
            clock=task.clock,
            metrics=MetricGroup(task.metrics, (name,)),
            job_parameters=task.job_parameters,
        )
        self.records_in = 0
        #: The user's function objects, opened before the first record and closed after the last.
        self.user_functions: tuple[Any, ...] = ()

    @property
    def keyed_state(self) -> KeyedStateBackend:
        """The keyed state of a keyed operator (the current key and its state tables)."""
        if self.backend is None:
            raise TypeError(f"operator {self.name!r} is not keyed: it has no keyed state")
        return self.backend

    def fail(self, error: BaseException, record: Any = None, *, has_record: bool = True) -> UserFunctionError:
        """Wrap a user function's exception with where it happened."""
        if isinstance(error, UserFunctionError):
            return error
        culprit, where, trace = self.name, f"operator {self.name!r}", user_traceback(error)
        if isinstance(error, KeySelectorError):
            culprit = where = error.where
            trace = user_traceback(error.error)
            if len(trace) == 1:  # no frame of the user's: the key itself is wrong, show the key_by
                trace = [*call_site_frame(error.call_site, f"{error.method}() was called"), *trace]
            error = error.error
        shown = _record_repr.repr(record) if has_record else None
        summary = f"{describe(error)} -- in {where}, subtask {self.task.subtask_name}, attempt {self.task.attempt}"
        if has_record:
            summary += f", record {shown}"
        return UserFunctionError(
            {
                "summary": summary,
                "operator": culprit,
                "subtask": self.task.subtask_name,
                "attempt": self.task.attempt,
                "record": shown,
                "exception": describe(error),
                "traceback": trace,
            }
        )

    def open_function(self, function: Any) -> None:
        opener = getattr(function, "open", None)
        if callable(opener) and not isinstance(function, type):
            try:
                opener(self.runtime_context)
            except Exception as error:
                raise self.fail(error, has_record=False) from error

    def close_function(self, function: Any) -> None:
        closer = getattr(function, "close", None)
        if callable(closer) and not isinstance(function, type):
            try:
                closer()
            except Exception as error:
                raise self.fail(error, has_record=False) from error

    def open(self) -> None:
        """Called before the first record: opens the user's functions (Flink's ``RichFunction.open``)."""
        for function in self.user_functions:
            self.open_function(function)

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        raise NotImplementedError

    def process_batch(self, values: list[Any]) -> None:
        """Records without timestamps; operators with a faster loop override this."""
        process = self.process
        for value in values:
            process(value, None)

    def process_batch_in_steps(self, values: list[Any]) -> Iterable[None]:
        """:meth:`process_batch`, pausing (yielding) where the task may hand on the output
        so far: an operator that makes many batches of one record (a split reader) pauses
        after each of them."""
        self.process_batch(values)
        return ()

    def process_watermark(self, watermark: int) -> None:
        self.output.emit_watermark(watermark)

    def process_watermark_status(self, idle: bool) -> None:
        """The input went idle (True) or active again (False): passed on, as Flink's
        one-input operators do (the task combines a subtask's channels first)."""
        self.output.emit_watermark_status(idle)

    def finish_key(self) -> None:
        """BATCH, sorted input: every record of the current key has been processed (see
        :mod:`flowmagic.runtime.sorting`); operators with timers fire that key's here."""

    def end_input(self) -> None:
        """All input has arrived (after the final watermark)."""

    def advance_processing_time(self, now: int) -> None:
        """Processing time reached ``now``: fire the processing-time timers due by then."""

    def next_processing_timer(self) -> int | None:
        """When this operator has work to do without input: the processing time of its
        earliest timer (None: never). An operator with processing-time behaviour that does
        not say when is due at once, so that a continuous job never sleeps through it."""
        if type(self).advance_processing_time is Operator.advance_processing_time:
            return None
        return MIN_WATERMARK

    def prepare_snapshot(self, checkpoint: bool) -> None:
        """A continuous job's epoch ends and its state is about to be written (Flink's
        ``prepareSnapshotPreBarrier``; ``checkpoint``: the epoch completes a checkpoint or a
        savepoint): hand on what belongs to this epoch."""

    def snapshot_progress(self) -> Any:
        """Where this subtask stands that is not keyed state (a watermark generator's last
        watermark, say): kept from epoch to epoch of one run, never in savepoints."""
        return None

    def restore_progress(self, progress: Any) -> None:
        """Take up the position of :meth:`snapshot_progress`."""

    def track_changes(self) -> bool:
        """Start recording which keys' state changes, for incremental snapshots; False when
        this operator cannot say (its snapshots are then always whole).

        Operators whose every change of a key's state happens while the key is current
        (set on the keyed state backend) opt in with ``tracks_changes``; one with state of
        its own records its keys into :attr:`changed_keys` too.
        """
        if not self.tracks_changes:
            return False
        self.changed_keys = set()
        if self.backend is not None:
            self.backend.touched = self.changed_keys
        return True

    def take_changed_keys(self) -> set[Any]:
        """The keys whose state changed since the last call (after :meth:`track_changes`)."""
        assert self.changed_keys is not None, "track_changes() first"
        changed = set(self.changed_keys)
        self.changed_keys.clear()
        return changed

    def state_keys(self) -> int:
        """How many keys this subtask holds state of (the live view's State table)."""
        return 0 if self.backend is None else self.backend.key_count()

    def pending_timers(self) -> int:
        """How many timers this subtask has registered that have not fired."""
        return 0

    def snapshot_keyed(self, keys: Iterable[Any] | None = None) -> dict[Any, dict[str, Any]]:
        """This subtask's keyed state, key by key (what a checkpoint stores by key group):
        of every key, or of ``keys`` only (those without state are left out).

        The default covers the state a user function reached through the runtime context;
        operators with state of their own add theirs.
        """
        if self.backend is None:
            return {}
        return self.backend.snapshot(keys)

    def snapshot_operator_state(self) -> Any:
        """This subtask's operator state (not keyed: broadcast state, a file writer's open
        part), or None when the operator has none; a checkpoint stores it per subtask."""
        return None

    def restore_operator_state(self, snapshot: Any) -> None:
        """Take over operator state from :meth:`snapshot_operator_state`: of this subtask,
        or of another one when the parallelism grew (broadcast state), or of each old
        subtask handed to this one (split state, see :attr:`splits_operator_state`)."""

    def restore_keyed(self, entries: dict[Any, dict[str, Any]]) -> None:
        """Take over the keyed state of ``entries`` (keys of this subtask's key groups)."""
        if self.backend is not None:
            self.backend.restore(entries)

    def close(self) -> None:
        """Called after end of input, to release resources: closes the user's functions."""
        for function in self.user_functions:
            self.close_function(function)
