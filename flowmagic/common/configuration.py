"""PyFlink's ``pyflink.common.configuration``."""

from flowmagic.api.pyflink import missing_names
from flowmagic.vocabulary.configuration import Configuration

__all__ = ["Configuration"]

__getattr__ = missing_names("flowmagic.common.configuration", {}, __all__)
