"""The broadcast state pattern: ``BroadcastStream``, ``BroadcastConnectedStream`` and the
broadcast process functions (Flink's and PyFlink's).

``stream.broadcast(MapStateDescriptor(...), ...)`` sends every record of ``stream`` to every
subtask of the operator it is connected to, and declares the broadcast states that operator
keeps (one dict per descriptor, the same in every subtask). ``other.connect(broadcast)``
pairs it with a stream, keyed or not; ``.process(function)`` makes the two-input operator
Flink makes: "Co-Process-Broadcast" of a ``BroadcastProcessFunction``, or
"Co-Process-Broadcast-Keyed" of a ``KeyedBroadcastProcessFunction`` on a KeyedStream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowmagic.errors import IncompatibleStreamsError, InvalidTypeError, KeyedStreamRequiredError, ProgramError
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.vocabulary.broadcast_functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from flowmagic.vocabulary.state import MapStateDescriptor
from flowmagic.vocabulary.types import TypeInformation

if TYPE_CHECKING:
    from flowmagic.api.datastream import DataStream
    from flowmagic.api.environment import StreamExecutionEnvironment

__all__ = [
    "BroadcastConnectedStream",
    "BroadcastStream",
]


class BroadcastStream:
    """A stream sent whole to every subtask of what it is connected to, with the broadcast
    states its descriptors declare; it can only be connected (``other.connect(this)``)."""

    def __init__(
        self, env: StreamExecutionEnvironment, stream: DataStream, descriptors: tuple[MapStateDescriptor, ...]
    ):
        self._env = env
        self.input_stream = stream
        self.broadcast_state_descriptors = list(descriptors)

    def __repr__(self) -> str:
        names = ", ".join(descriptor.name for descriptor in self.broadcast_state_descriptors)
        return f"<BroadcastStream of {self.input_stream!r} with {names}>"


class BroadcastConnectedStream:
    """A stream (keyed or not) connected to a :class:`BroadcastStream`: ``process(function)``."""

    def __init__(
        self, env: StreamExecutionEnvironment, non_broadcast_stream: DataStream, broadcast_stream: BroadcastStream
    ):
        if broadcast_stream._env is not env:
            raise IncompatibleStreamsError(
                "connect(): the streams belong to different StreamExecutionEnvironments; "
                "all streams of one job must come from the same environment."
            )
        self._env = env
        self.non_broadcast_stream = non_broadcast_stream
        self.broadcast_stream = broadcast_stream
        self.broadcast_state_descriptors = list(broadcast_stream.broadcast_state_descriptors)

    def __repr__(self) -> str:
        return f"<BroadcastConnectedStream {self.non_broadcast_stream!r} + {self.broadcast_stream!r}>"

    def process(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        """Apply a BroadcastProcessFunction (to an unkeyed stream) or a
        KeyedBroadcastProcessFunction (to a KeyedStream); ``output_type`` declares the
        result's type."""
        from flowmagic.api.datastream import ConnectedStreams

        for method in ("process_element", "process_broadcast_element"):
            if not callable(getattr(func, method, None)):
                raise InvalidTypeError(
                    "BroadcastConnectedStream.process() expects a BroadcastProcessFunction or a "
                    f"KeyedBroadcastProcessFunction (an object with process_element() and "
                    f"process_broadcast_element()), got {func!r}."
                )
        key = self.non_broadcast_stream._state_key()
        if isinstance(func, BroadcastProcessFunction) and key is not None:
            raise ProgramError("A BroadcastProcessFunction can only be used on a non-keyed stream.")
        if isinstance(func, KeyedBroadcastProcessFunction) and key is None:
            raise KeyedStreamRequiredError("A KeyedBroadcastProcessFunction can only be used on a keyed stream.")
        params: dict[str, Any] = {"function": func, "descriptors": tuple(self.broadcast_state_descriptors)}
        if key is None:
            name, kind = "Co-Process-Broadcast", OperatorKind.CO_BROADCAST_PROCESS
        else:
            name, kind = "Co-Process-Broadcast-Keyed", OperatorKind.CO_BROADCAST_KEYED_PROCESS
            params["key_selector"] = key
        connected = ConnectedStreams(self._env, self.non_broadcast_stream, self.broadcast_stream.input_stream)
        return connected._two_input(name, OperatorSpec(kind, params), output_type)
