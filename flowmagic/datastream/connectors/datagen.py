"""Flink's data generator connector (``org.apache.flink.connector.datagen.source``; PyFlink has
no module for it): ``DataGeneratorSource``, ``GeneratorFunction``, ``RateLimiterStrategy``."""

from flowmagic.api.data_generator_source import LONG_MAX, DataGeneratorSource, GeneratorFunction, RateLimiterStrategy
from flowmagic.api.pyflink import missing_names

__all__ = ["LONG_MAX", "DataGeneratorSource", "GeneratorFunction", "RateLimiterStrategy"]

__getattr__ = missing_names("flowmagic.datastream.connectors.datagen", {}, __all__)
