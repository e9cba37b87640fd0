"""The program builder's argument checks, in one place: each raises the error Flink (or
PyFlink) raises for the same argument, naming the method and what it expects."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowmagic.errors import InvalidParallelismError, InvalidTypeError, ProgramError
from flowmagic.key_groups import UPPER_BOUND_MAX_PARALLELISM
from flowmagic.vocabulary.state import MapStateDescriptor
from flowmagic.vocabulary.windows import Evictor, Trigger, WindowAssigner

if TYPE_CHECKING:
    from flowmagic.api.datastream import DataStream

__all__ = [
    "check_assigner",
    "check_callable",
    "check_count",
    "check_descriptors",
    "check_max_parallelism",
    "check_parallelism",
    "check_time_spans",
]


def check_parallelism(parallelism: Any, what: str = "The parallelism of an operator") -> int:
    if isinstance(parallelism, bool) or not isinstance(parallelism, int):
        raise InvalidParallelismError(f"{what} must be an int, got {parallelism!r}.")
    if parallelism <= 0:
        raise InvalidParallelismError(f"{what} must be at least 1.")
    return parallelism


def check_max_parallelism(max_parallelism: Any) -> int:
    if isinstance(max_parallelism, bool) or not isinstance(max_parallelism, int):
        raise InvalidParallelismError(f"The maximum parallelism must be an int, got {max_parallelism!r}.")
    if max_parallelism <= 0:
        raise InvalidParallelismError("The maximum parallelism must be greater than 0.")
    if max_parallelism > UPPER_BOUND_MAX_PARALLELISM:
        raise InvalidParallelismError(
            f"The maximum parallelism must be smaller than or equal to {UPPER_BOUND_MAX_PARALLELISM}."
        )
    return max_parallelism


def check_callable(function: Any, what: str, *method_names: str) -> Any:
    if callable(function) or any(hasattr(function, name) for name in method_names):
        return function
    wanted = " or an object with " + "/".join(f"{n}()" for n in method_names) if method_names else ""
    raise ProgramError(f"{what} expects a callable{wanted}, got {function!r}.")


def check_assigner(assigner: Any) -> WindowAssigner:
    if not isinstance(assigner, WindowAssigner):
        raise ProgramError(f"Expected a window assigner such as TumblingEventTimeWindows.of(...), got {assigner!r}.")
    return assigner


def check_time_spans(made: WindowAssigner | Trigger | Evictor, stream: DataStream) -> None:
    """A PyFlink program is refused a bare int for a time span, as PyFlink refuses it."""
    call = made.int_span_call
    if call is not None and stream.get_execution_environment().dialect.python_windows:
        raise InvalidTypeError(
            f"{call}: PyFlink takes a Time or Duration here (e.g. Time.milliseconds(5)) and fails on an int "
            "('int' object has no attribute 'to_milliseconds'); only flowmagic's own API reads an int as "
            "milliseconds."
        )


def check_count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ProgramError(f"{what} must be a positive int, got {value!r}.")
    return value


def check_descriptors(descriptors: tuple[Any, ...]) -> tuple[MapStateDescriptor, ...]:
    """``broadcast(...)``'s descriptors: MapStateDescriptors of distinct names."""
    names = set()
    for descriptor in descriptors:
        if not isinstance(descriptor, MapStateDescriptor):
            raise InvalidTypeError(f"broadcast_state_descriptor must be MapStateDescriptor, got {descriptor!r}.")
        if descriptor.name in names:
            raise ProgramError(f"broadcast() declares the broadcast state {descriptor.name!r} twice.")
        names.add(descriptor.name)
    return tuple(descriptors)
