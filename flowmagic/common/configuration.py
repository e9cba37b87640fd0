"""PyFlink's ``pyflink.common.configuration``."""

from flowmagic.api.configuration import Configuration
from flowmagic.api.pyflink import missing_names

__all__ = ["Configuration"]

__getattr__ = missing_names("flowmagic.common.configuration", {}, __all__)
