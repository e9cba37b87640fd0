"""The exceptions flowmagic raises.

Every error derives from :class:`FlowError`, so ``except flowmagic.FlowError`` catches
anything flowmagic itself reports. Where Flink has a message for the same mistake, the
message carries Flink's wording so that users can search for it::

    FlowError
    ├── ProgramError                  the DataStream program is invalid (API layer)
    │   ├── InvalidArgumentError      an argument out of range (Flink's IllegalArgumentException)
    │   ├── InvalidTypeError          an argument of a type the API does not take
    │   ├── InvalidParallelismError   parallelism / max parallelism out of bounds
    │   ├── IncompatibleStreamsError  union/connect of streams that cannot be combined
    │   ├── KeyedStreamRequiredError  window/reduce/sum... called on a non-keyed stream
    │   ├── InvalidFieldReferenceError  an aggregation's field the records do not have
    │   ├── NotSerializableError      a user function that cannot be pickled for the tasks
    │   ├── ValidationException       a table, connector option or SQL statement Flink rejects
│   └── UnsupportedFeatureError   a PyFlink class or module flowmagic does not have
    ├── GraphError                    a graph cannot be built from the program
    │   ├── ForwardPartitioningError  forward() across different parallelism
    │   ├── HashCollisionError        two operators share a uid
    │   └── MissingTimestampsError    an event-time window without timestamps upstream
    ├── KeyRoutingError               a key cannot be routed like Flink would route it
    └── JobError                      a job could not run to completion
        ├── UnsupportedSourceError    a source the runtime cannot run (yet)
        ├── SparkEnvironmentError     the SparkSession or its Python workers cannot run flowmagic
        ├── NonRestoredStateError     savepoint state of an operator the program no longer has
        ├── StateIntegrityError       a checkpoint or savepoint that is damaged, altered, or not signed
        │                             with this user's state key (nothing of it was unpickled)
        ├── StorageError              checkpoint storage that cannot be written (a full disk): path, cause
        ├── JobFailedError            a task failed (operator, subtask, record, traceback)
        └── JobCancelledError         the job was cancelled

The argument errors also derive from ``ValueError`` / ``TypeError``, so ``except ValueError``
around a call keeps working.
"""

from __future__ import annotations

import pickle

__all__ = [
    "FlowError",
    "ForwardPartitioningError",
    "GraphError",
    "HashCollisionError",
    "IncompatibleStreamsError",
    "InvalidArgumentError",
    "InvalidFieldReferenceError",
    "InvalidParallelismError",
    "InvalidTypeError",
    "JobCancelledError",
    "JobError",
    "JobFailedError",
    "KeyRoutingError",
    "KeyedStreamRequiredError",
    "MissingTimestampsError",
    "NonRestoredStateError",
    "NotSerializableError",
    "ProgramError",
    "SparkEnvironmentError",
    "StateIntegrityError",
    "StorageError",
    "UnsupportedFeatureError",
    "UnsupportedSourceError",
    "ValidationException",
]


class FlowError(Exception):
    """Root of every error flowmagic raises."""


class ProgramError(FlowError):
    """The DataStream program itself is invalid (raised while the program is written)."""


class InvalidArgumentError(ProgramError, ValueError):
    """An argument outside what Flink accepts (Flink raises ``IllegalArgumentException``)."""


class InvalidTypeError(ProgramError, TypeError):
    """An argument of a type the API does not take."""


class InvalidParallelismError(ProgramError, ValueError):
    """A parallelism or max parallelism outside what Flink accepts."""


class IncompatibleStreamsError(ProgramError, TypeError):
    """Streams that cannot be combined by union or connect."""


class KeyedStreamRequiredError(ProgramError, AttributeError):
    """A method of keyed streams (``window``, ``reduce``, ``sum``...) called on a DataStream."""


class InvalidFieldReferenceError(ProgramError, IndexError):
    """An aggregation's field position or name that the stream's records do not have.

    Flink finds out from the stream's type when the program is written; flowmagic, which
    has no types, from the first record the aggregation receives.
    """


class NotSerializableError(ProgramError, pickle.PicklingError):
    """A user function that cannot be pickled, so cannot be shipped to the tasks (Flink's
    closure cleaner finds the same when the program is written; flowmagic when the job is
    built). A ``PicklingError`` too, which Spark lets through as it is."""


class ValidationException(ProgramError, ValueError):
    """A table, its connector or its options that cannot be used, or a SQL statement that is
    invalid: Flink's ``ValidationException``, by its name, as Flink's client prints it."""


class UnsupportedFeatureError(ProgramError, ImportError):
    """A part of PyFlink's API that flowmagic does not support; the message says what to use.

    It is an ``ImportError`` so that ``from flowmagic.datastream import X`` fails with this
    message (an ``AttributeError`` from a module's ``__getattr__`` would be replaced by
    Python's bare "cannot import name").
    """


class GraphError(FlowError):
    """A StreamGraph, JobGraph or ExecutionGraph cannot be built from the program."""


class ForwardPartitioningError(GraphError):
    """An explicit forward() between operators of different parallelism."""


class HashCollisionError(GraphError):
    """Two operators were given the same uid."""


class MissingTimestampsError(GraphError):
    """An event-time window whose input never had timestamps assigned."""


class KeyRoutingError(FlowError, TypeError):
    """A key of a type whose Java ``hashCode`` flowmagic cannot reproduce."""


class JobError(FlowError):
    """A job could not run to completion."""


class UnsupportedSourceError(JobError):
    """The program reads a source the runtime cannot run (yet)."""


class NonRestoredStateError(JobError):
    """A savepoint holds state of an operator the new program does not have (Flink's
    ``allowNonRestoredState`` case)."""


class StateIntegrityError(JobError):
    """A checkpoint or savepoint that cannot be restored as it is: a file damaged, missing or
    altered since it was written, a manifest that names paths outside its directory, or one not
    signed with this user's state key (copied from another user or machine). Raised before any
    of it is unpickled; the message names the file, the operator and, for a key that differs,
    how to trust the savepoint."""


class StorageError(JobError, OSError):
    """A checkpoint or savepoint file that cannot be written (``No space left on device:
    <path>``): nothing of it is left behind, and the previous checkpoint stays whole. An
    ``OSError`` too, with the ``errno`` of its cause."""


class SparkEnvironmentError(JobError):
    """The SparkSession cannot run flowmagic: a Spark Connect session (no RDD API), or Python
    workers that cannot (a Python version other than the driver's); the message says the fix."""


class JobFailedError(JobError):
    """A task failed: carries the operator, subtask, attempt, record and user traceback.

    ``failure`` holds the same details as plain data (a dict) for programmatic use.
    """

    def __init__(self, message: str, failure: dict | None = None):
        super().__init__(message)
        self.failure = failure or {}


class JobCancelledError(JobError):
    """The job was cancelled before it finished (an interrupt, or its client's ``cancel()``)."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows what this returns instead of the traceback: a cancellation the user
        # asked for is one line, as `%flow run` shows it, not flowmagic's frames.
        return [f"{type(self).__name__}: {self}"]
