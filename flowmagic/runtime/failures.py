"""What a user reads when a job fails: the operator, subtask, record and their own code's lines."""

from __future__ import annotations

import linecache
import re
from typing import Any

__all__ = ["failure_message"]


def _with_source_lines(lines: list[str]) -> list[str]:
    """Add the source of frames the executor could not show: code of notebook cells exists in
    the driver's ``linecache`` only."""
    shown: list[str] = []
    for position, line in enumerate(lines):
        shown.append(line)
        frame = re.match(r'\s*File "(.+)", line (\d+), in ', line)
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
        python_errors = re.findall(r"^(\w+(?:Error|Exception|Exit)\b.*)$", text, re.MULTILINE)
        lines = [line for line in text.splitlines() if line.strip()]
        cause = python_errors[-1] if python_errors else (lines[0] if lines else type(error).__name__)
        return f"The job failed in {where}: {cause}"
    trace = "\n".join(_with_source_lines(failure.get("traceback", [])))
    record = f"\n  record:   {failure['record']}" if failure.get("record") is not None else ""
    return (
        f"Job failed: {failure['exception']}\n"
        f"  operator: {failure['operator']}\n"
        f"  subtask:  {failure['subtask']} (attempt {failure['attempt']}){record}\n"
        f"Traceback of the user function (most recent call last):\n{trace}"
    )
