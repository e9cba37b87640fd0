"""PyFlink's ``EnvironmentSettings``: streaming or batch mode."""

from __future__ import annotations


class EnvironmentSettings:
    """The mode a table environment plans in."""

    class Builder:
        """``EnvironmentSettings.new_instance()...build()``."""

        def __init__(self) -> None:
            self._streaming = True

        def in_streaming_mode(self) -> EnvironmentSettings.Builder:
            self._streaming = True
            return self

        def in_batch_mode(self) -> EnvironmentSettings.Builder:
            self._streaming = False
            return self

        def build(self) -> EnvironmentSettings:
            return EnvironmentSettings(self._streaming)

    def __init__(self, streaming: bool = True) -> None:
        self._streaming = streaming

    @staticmethod
    def new_instance() -> EnvironmentSettings.Builder:
        return EnvironmentSettings.Builder()

    @staticmethod
    def in_streaming_mode() -> EnvironmentSettings:
        return EnvironmentSettings(True)

    @staticmethod
    def in_batch_mode() -> EnvironmentSettings:
        return EnvironmentSettings(False)

    def is_streaming_mode(self) -> bool:
        return self._streaming
