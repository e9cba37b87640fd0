"""What a user reads when a job fails: the operator, subtask, record and their own code's lines.

On the executors, :func:`describe` bounds an exception's text, and :func:`user_failure`
names the operator of a ``SystemExit`` or ``KeyboardInterrupt`` (which operators, catching
``Exception``, let pass) from its traceback. On the driver, :func:`failure_message` makes
the message of the failed job.
"""

from __future__ import annotations

import linecache
import os
import re
import reprlib
import types
from collections.abc import Callable, Iterator
from typing import Any

from flowmagic.errors import InvalidFieldReferenceError
from flowmagic.runtime.wire import TIMESTAMPED, VALUES
from flowmagic.vocabulary.types import Row

__all__ = [
    "MAX_MESSAGE",
    "call_site_frame",
    "check_field_reference",
    "describe",
    "failure_message",
    "unpicklable_part",
    "unpicklable_records",
    "user_failure",
    "with_source_lines",
]

#: Characters of an exception's message shown; a longer one is cut with a note.
MAX_MESSAGE = 2_000

_NO_RECORD = object()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# How deep the search for what cannot be pickled goes into closures, containers and fields.
_SEARCH_DEPTH = 8
_object_repr = reprlib.Repr()
_object_repr.maxstring = 80
_object_repr.maxother = 80


def describe(error: BaseException) -> str:
    """``Type: message`` of an exception, never empty, the message cut to ``MAX_MESSAGE``."""
    name = type(error).__name__
    if isinstance(error, SystemExit):
        code = "" if error.code is None else repr(error.code)
        text = f"a user function called sys.exit({code})"
    elif isinstance(error, KeyboardInterrupt) and not str(error):
        text = "raised in a user function"
    else:
        try:
            text = str(error)
        except Exception:
            text = "(str() of the exception failed)"
    if len(text) > MAX_MESSAGE:
        text = f"{text[:MAX_MESSAGE]}... [truncated: the message has {len(text):,} characters]"
    return f"{name}: {text}" if text else name


def user_failure(error: BaseException, vertex_name: str, index: int, parallelism: int, attempt: int) -> dict[str, Any]:
    """The failure details of ``error``, raised by a user function in a subtask of the vertex.

    Its innermost operator frame (and the record in it, if any) names the culprit; without
    one (a source function), the subtask's chain does.
    """
    # Imported here: operator imports this module for describe().
    from flowmagic.runtime.operators.operator import Operator, UserFunctionError, user_traceback

    if isinstance(error, UserFunctionError):
        return error.details
    frames = []
    traceback = error.__traceback__
    while traceback is not None:
        frames.append(traceback.tb_frame)
        traceback = traceback.tb_next
    operator: Operator | None = None
    record: Any = _NO_RECORD
    for position, frame in enumerate(frames):
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, Operator):
            operator, record = candidate, _NO_RECORD
            # The record is the operator's ``value``, or its comprehension's (a frame of its own
            # before Python 3.12), up to the first frame outside flowmagic.
            for inner in frames[position:]:
                if not inner.f_code.co_filename.startswith(_PACKAGE_DIR):
                    break
                record = inner.f_locals.get("value", record)
    if operator is not None:
        return operator.fail(error, record, has_record=record is not _NO_RECORD).details
    subtask = f"{vertex_name} ({index + 1}/{parallelism})"
    return {
        "summary": f"{describe(error)} -- in {subtask}, attempt {attempt}",
        "operator": vertex_name,
        "subtask": subtask,
        "attempt": attempt,
        "record": None,
        "exception": describe(error),
        "traceback": user_traceback(error),
    }


def unpicklable_part(value: Any, dumps: Callable[[Any], Any], what: str) -> str:
    """What in ``value`` (itself described as ``what``) ``dumps`` cannot pickle: the innermost
    closure variable, global, default, element or field that fails, as ``"<path> is <object>"``."""
    seen: set[int] = set()
    for _depth in range(_SEARCH_DEPTH):
        seen.add(id(value))
        for name, part in _parts(value, what):
            if id(part) in seen:
                continue
            try:
                dumps(part)
            except Exception:
                value, what = part, name
                break
        else:
            break
    return f"{what} is {_object_repr.repr(value)}"


def _parts(value: Any, what: str) -> Iterator[tuple[str, Any]]:
    """The objects pickling ``value`` pickles, each with its description."""
    if isinstance(value, types.MethodType):
        yield f"the object of method {value.__qualname__}", value.__self__
    elif isinstance(value, types.FunctionType):
        code = value.__code__
        for name, cell in zip(code.co_freevars, value.__closure__ or (), strict=True):
            try:
                yield f"closure variable {name!r} of {value.__qualname__}", cell.cell_contents
            except ValueError:  # a cell not yet filled
                continue
        for name in code.co_names:
            if name in value.__globals__:
                yield f"global {name!r} of {value.__qualname__}", value.__globals__[name]
        for position, default in enumerate(value.__defaults__ or ()):
            yield f"default value {position} of {value.__qualname__}", default
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{what}[{key!r}]", item
    elif isinstance(value, (list, tuple, set, frozenset)):
        for position, item in enumerate(value):
            yield f"{what}[{position}]", item
    elif not isinstance(value, type):
        fields = getattr(value, "__dict__", None)
        if isinstance(fields, dict):
            for name, item in fields.items():
                yield f"{what}.{name}", item


def call_site_frame(call_site: str | None, what: str) -> list[str]:
    """A traceback line for ``call_site`` (``file:line``) where ``what`` was written; the driver
    adds its source (see :func:`failure_message`). None without a call site."""
    filename, _, line = (call_site or "").rpartition(":")
    if not filename or not line.isdigit():
        return []
    return [f'  File "{filename}", line {line}, where {what}']


def unpicklable_records(
    error: Exception,
    payload: tuple[int, Any],
    operator: str,
    call_site: str | None,
    subtask: str,
    attempt: int,
    dumps: Callable[[Any], Any],
) -> dict[str, Any]:
    """The failure details of an exchange item ``payload`` that ``dumps`` could not pickle:
    the operator that emitted it, its record that cannot be pickled and what in it."""
    kind, data = payload
    values = data if kind == VALUES else [value for value, _ in data] if kind == TIMESTAMPED else []
    record: Any = _NO_RECORD
    for value in values:
        try:
            dumps(value)
        except Exception:
            record = value
            break
    culprit = unpicklable_part(record, dumps, "the record") if record is not _NO_RECORD else ""
    where = f" (created at {call_site})" if call_site else ""
    summary = (
        f"{describe(error)} -- a record of operator {operator!r}{where} cannot be pickled to cross an exchange, "
        f"subtask {subtask}, attempt {attempt}"
    )
    explanation = "Records crossing an exchange are pickled" + (f": {culprit}." if culprit else ".")
    return {
        "summary": summary,
        "operator": operator,
        "subtask": subtask,
        "attempt": attempt,
        "record": None if record is _NO_RECORD else _object_repr.repr(record),
        "exception": describe(error),
        "traceback": [*call_site_frame(call_site, f"operator {operator!r} was created"), explanation, describe(error)],
    }


def check_field_reference(record: Any, position: int | str) -> None:
    """Raise :class:`InvalidFieldReferenceError` unless ``record`` has field ``position``
    (checked on a stream's first record, as Flink checks the stream's type)."""
    if isinstance(record, dict):
        if position not in record:
            raise InvalidFieldReferenceError(f'Unable to find field "{position}" in type {_type_of(record)}.')
    elif isinstance(record, Row) and isinstance(position, str):
        try:
            record[position]
        except KeyError:
            raise InvalidFieldReferenceError(f'Unable to find field "{position}" in type {_type_of(record)}.') from None
    elif isinstance(record, (tuple, list, Row)):
        if not isinstance(position, int) or not 0 <= position < len(record):
            raise InvalidFieldReferenceError(
                f'Tried to select {position}. field on "{_type_of(record)}", which is an invalid index.'
            )
    elif position != 0:
        raise InvalidFieldReferenceError(
            f"The {position}. field selected on a basic type ({_type_of(record)}). A field expression on a basic "
            "type can only select the 0th field (which means selecting the entire basic type)."
        )


def _type_of(record: Any) -> str:
    if isinstance(record, (tuple, list, Row)):
        return f"{type(record).__name__} of {len(record)} fields"
    if isinstance(record, dict):
        return f"dict with keys {', '.join(map(repr, list(record)[:10]))}"
    return type(record).__name__


def with_source_lines(lines: list[str]) -> list[str]:
    """Add the source of frames the executor could not show: code of notebook cells exists in
    the driver's ``linecache`` only."""
    shown: list[str] = []
    for position, line in enumerate(lines):
        shown.append(line)
        frame = re.match(r'\s*File "(.+)", line (\d+), (?:in|where) ', line)
        has_source = position + 1 < len(lines) and lines[position + 1].startswith("    ")
        if frame and not has_source:
            source = linecache.getline(frame.group(1), int(frame.group(2))).strip()
            if source:
                shown.append(f"    {source}")
    return shown


def failure_message(failure: dict[str, Any] | None, error: BaseException, where: str) -> str:
    """The message of a failed job: from a task's failure details when there are any, else
    the last Python error named in ``error`` (what the executor ``where`` raised)."""
    if failure is None:
        text = str(error)
        python_errors = re.findall(r"^([\w.]*(?:Error|Exception|Exit)\b.*)$", text, re.MULTILINE)
        lines = [line for line in text.splitlines() if line.strip()]
        cause = python_errors[-1] if python_errors else (lines[0] if lines else type(error).__name__)
        return f"The job failed in {where}: {cause}"
    trace = "\n".join(with_source_lines(failure.get("traceback", [])))
    record = f"\n  record:   {failure['record']}" if failure.get("record") is not None else ""
    return (
        f"Job failed: {failure['exception']}\n"
        f"  operator: {failure['operator']}\n"
        f"  subtask:  {failure['subtask']} (attempt {failure['attempt']}){record}\n"
        f"Traceback of the user function (most recent call last):\n{trace}"
    )
