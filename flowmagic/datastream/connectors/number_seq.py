"""PyFlink's ``pyflink.datastream.connectors.number_seq``: ``NumberSequenceSource``."""

from flowmagic.api.pyflink import missing_names
from flowmagic.api.sources import NumberSequenceSource

__all__ = ["NumberSequenceSource"]

__getattr__ = missing_names("flowmagic.datastream.connectors.number_seq", {}, __all__)
