"""PyFlink's ``pyflink.common``: types, rows, watermark strategies, time, configuration."""

from flowmagic.api.execution_config import ExecutionConfig
from flowmagic.api.pyflink import SCHEMAS, missing_names
from flowmagic.vocabulary.configuration import Configuration
from flowmagic.vocabulary.job_execution_result import JobExecutionResult, JobID
from flowmagic.vocabulary.sinks import Encoder, SimpleStringSchema
from flowmagic.vocabulary.time import Duration, Time
from flowmagic.vocabulary.types import Row, RowKind, TypeInformation, Types
from flowmagic.vocabulary.watermarks import WatermarkStrategy

__all__ = [
    "Configuration",
    "Duration",
    "Encoder",
    "ExecutionConfig",
    "JobExecutionResult",
    "JobID",
    "Row",
    "RowKind",
    "SimpleStringSchema",
    "Time",
    "TypeInformation",
    "Types",
    "WatermarkStrategy",
]

__getattr__ = missing_names(
    "flowmagic.common",
    {
        "JobClient": "env.execute_async() returns flowmagic's job client",
        "Instant": "use int milliseconds or datetime",
        "RestartStrategies": "set restart-strategy.type and its options on a Configuration, as Flink 2 does",
        "RestartStrategyConfiguration": "set restart-strategy.type and its options on a Configuration, as Flink 2 does",
        "ConfigOptions": "set options on Configuration by their string keys",
        "ConfigOption": "set options on Configuration by their string keys",
        "CompletableFuture": "the job client's methods return their results when they are done",
        "JobStatus": "job_client.get_job_status() returns it; compare it by name (str(status) == 'RUNNING')",
        "TypeSerializer": "flowmagic serializes records itself: declare their types with Types",
        "InputDependencyConstraint": "a Flink 1.x batch scheduling option, without effect in Flink 2",
        "AssignerWithPeriodicWatermarksWrapper": "use a WatermarkStrategy",
        "SerializationSchema": SCHEMAS,
        "DeserializationSchema": SCHEMAS,
        "ByteArraySchema": SCHEMAS,
    },
    __all__,
)
