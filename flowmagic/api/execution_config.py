"""PyFlink's ``ExecutionConfig`` (``env.get_config()``): settings of a program's runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowmagic.errors import InvalidArgumentError, InvalidTypeError

if TYPE_CHECKING:
    from flowmagic.api.environment import StreamExecutionEnvironment

__all__ = ["ExecutionConfig"]


class ExecutionConfig:
    """The environment's ExecutionConfig, as PyFlink's ``env.get_config()`` returns: what is
    set here holds for the environment's next ``execute()``. It holds the global job
    parameters and the auto-watermark interval; parallelism is the environment's."""

    def __init__(self, env: StreamExecutionEnvironment):
        self._env = env
        self._job_parameters: dict[str, str] = {}
        #: ``pipeline.auto-watermark-interval`` in ms.
        self._auto_watermark_interval_ms = 200

    def set_global_job_parameters(self, global_job_parameters_dict: dict[str, str]) -> ExecutionConfig:
        """Parameters every function reads with ``runtime_context.get_job_parameter(key, default)``
        (they replace those set before)."""
        if not isinstance(global_job_parameters_dict, dict):
            raise InvalidTypeError(
                f"set_global_job_parameters() takes a dict of str to str, got {global_job_parameters_dict!r}"
            )
        for key, value in global_job_parameters_dict.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise InvalidTypeError(f"Global job parameters are str to str, got {key!r}: {value!r}")
        self._job_parameters = dict(global_job_parameters_dict)
        return self

    def get_global_job_parameters(self) -> dict[str, str]:
        """The global job parameters, as a new dict."""
        return dict(self._job_parameters)

    def set_auto_watermark_interval(self, interval: int) -> ExecutionConfig:
        """``pipeline.auto-watermark-interval`` in ms (0: no periodic watermarks)."""
        if not isinstance(interval, int) or isinstance(interval, bool) or interval < 0:
            raise InvalidArgumentError(f"The auto watermark interval must be a non-negative number of ms: {interval!r}")
        self._auto_watermark_interval_ms = interval
        return self

    def get_auto_watermark_interval(self) -> int:
        return self._auto_watermark_interval_ms

    def set_parallelism(self, parallelism: int) -> ExecutionConfig:
        self._env.set_parallelism(parallelism)
        return self

    def get_parallelism(self) -> int:
        return self._env.get_parallelism()

    def set_max_parallelism(self, max_parallelism: int) -> ExecutionConfig:
        self._env.set_max_parallelism(max_parallelism)
        return self

    def get_max_parallelism(self) -> int:
        return self._env.get_max_parallelism()

    def __repr__(self) -> str:
        settings: dict[str, Any] = {
            "parallelism": self.get_parallelism(),
            "global_job_parameters": self.get_global_job_parameters(),
        }
        return f"ExecutionConfig({settings})"
