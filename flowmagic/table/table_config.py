"""PyFlink's ``TableConfig``: the table options (``table.*``, ``parallelism.default`` ...)."""

from __future__ import annotations


class TableConfig:
    """Options of one table environment; ``SET 'k' = 'v'`` statements write here too."""

    def __init__(self, options: dict[str, str]) -> None:
        self._options = options

    def set(self, key: str, value: str) -> TableConfig:
        """Set an option (values are strings, as in Flink's configuration)."""
        self._options[key] = str(value)
        return self

    def get(self, key: str, default: str | None = None) -> str | None:
        return self._options.get(key, default)

    def get_local_timezone(self) -> str:
        return self._options.get("table.local-time-zone", "default")

    def set_local_timezone(self, timezone_id: str) -> None:
        self._options["table.local-time-zone"] = timezone_id

    def to_dict(self) -> dict[str, str]:
        return dict(self._options)
