"""PyFlink's ``pyflink.common.time``."""

from flowmagic.api.pyflink import missing_names
from flowmagic.vocabulary.time import Duration, Time

__all__ = ["Duration", "Time"]

__getattr__ = missing_names("flowmagic.common.time", {"Instant": "use int milliseconds or datetime"}, __all__)
