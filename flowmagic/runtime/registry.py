"""Every operator and source kind the runtime can run (importing a module registers its kinds)."""

from flowmagic.runtime import sinks, sources, windowing  # noqa: F401 - each module registers its kinds
from flowmagic.runtime.operators import OPERATORS
from flowmagic.runtime.sources import SOURCES

__all__ = ["OPERATORS", "SOURCES"]
