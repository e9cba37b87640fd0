"""PyFlink's ``pyflink.common.watermark_strategy``."""

from flowmagic.api.pyflink import missing_names
from flowmagic.vocabulary.watermarks import TimestampAssigner, WatermarkStrategy

__all__ = ["TimestampAssigner", "WatermarkStrategy"]

__getattr__ = missing_names(
    "flowmagic.common.watermark_strategy",
    {"AssignerWithPeriodicWatermarksWrapper": "use WatermarkStrategy.for_bounded_out_of_orderness(...)"},
    __all__,
)
