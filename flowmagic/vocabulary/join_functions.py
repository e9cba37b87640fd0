"""The functions of two-stream joins: window joins' ``JoinFunction`` / ``FlatJoinFunction``,
coGroups' ``CoGroupFunction`` and interval joins' ``ProcessJoinFunction``."""

from __future__ import annotations

from typing import Any

from flowmagic.vocabulary.functions import Function, OutputTag

__all__ = ["CoGroupFunction", "FlatJoinFunction", "JoinFunction", "ProcessJoinFunction"]


class JoinFunction(Function):
    """``join(first, second)`` returns the record made of one pair of a window join."""

    def join(self, first: Any, second: Any) -> Any:
        raise NotImplementedError


class FlatJoinFunction(Function):
    """``join(first, second, out)`` emits any number of records per pair with ``out.collect``."""

    def join(self, first: Any, second: Any, out: Any) -> None:
        raise NotImplementedError


class CoGroupFunction(Function):
    """``co_group(first, second)``: the lists of both inputs' records of one key and window
    (one may be empty); returns (or yields) records, or takes an ``out`` last."""

    def co_group(self, first: list[Any], second: list[Any]) -> Any:
        raise NotImplementedError


class ProcessJoinFunction(Function):
    """``process_element(left, right, ctx)`` per joined pair of an interval join, returning (or
    yielding) records, or taking an ``out`` last. ``ctx.get_left_timestamp()``,
    ``get_right_timestamp()``, ``get_timestamp()`` (the larger, the result's) and
    ``output(tag, value)``."""

    class Context:
        def get_left_timestamp(self) -> int:
            raise NotImplementedError

        def get_right_timestamp(self) -> int:
            raise NotImplementedError

        def get_timestamp(self) -> int:
            raise NotImplementedError

        def output(self, output_tag: OutputTag, value: Any) -> None:
            raise NotImplementedError

    def process_element(self, left: Any, right: Any, ctx: ProcessJoinFunction.Context) -> Any:
        raise NotImplementedError
