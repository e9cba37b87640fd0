"""StreamExecutionEnvironment: where a DataStream program starts and its graphs come from."""

from __future__ import annotations

import contextlib
import copy
import inspect
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from flowmagic import compile as passes
from flowmagic.api.arguments import check_callable, check_max_parallelism, check_parallelism
from flowmagic.api.checkpointing import CheckpointConfig
from flowmagic.api.data_generator_source import datagen_operator
from flowmagic.api.datastream import DataStream, call_site
from flowmagic.api.execution_config import ExecutionConfig
from flowmagic.api.sources import Source, SourceFunction, java_source_unsupported
from flowmagic.errors import InvalidArgumentError, InvalidTypeError, ProgramError
from flowmagic.graph.execution_graph import ExecutionGraph
from flowmagic.graph.job_graph import JobGraph
from flowmagic.graph.operator_params import (
    CollectionSourceParams,
    FileMonitorSourceParams,
    FileSplitReaderParams,
    SequenceSourceParams,
    SocketSourceParams,
    SourceParams,
    SparkSourceParams,
)
from flowmagic.graph.operators import ChainingStrategy, DriverSide, OperatorKind, OperatorSpec
from flowmagic.graph.stream_graph import StreamGraph
from flowmagic.graph.transformations import (
    LegacySinkTransformation,
    OneInputTransformation,
    SourceTransformation,
    Transformation,
)
from flowmagic.vocabulary.configuration import Configuration
from flowmagic.vocabulary.dialect import JAVA, ApiDialect
from flowmagic.vocabulary.option_values import option_bool, option_int, option_millis
from flowmagic.vocabulary.pipeline_config import ContinuousOptions, PipelineConfig, RuntimeExecutionMode
from flowmagic.vocabulary.restart_strategy import RESTART_OPTIONS, RestartStrategy
from flowmagic.vocabulary.types import TypeInformation, Types, as_declared, check_type_info
from flowmagic.vocabulary.watermarks import WatermarkStrategy

if TYPE_CHECKING:
    from flowmagic.runtime import JobResult

__all__ = ["ProgramWatch", "StreamExecutionEnvironment", "watch_programs"]


class ProgramWatch:
    """The environments made and the programs executed while a :func:`watch_programs` block
    runs: how a ``%%flow`` cell holding a whole PyFlink program (which makes its own
    environment, and whose ``execute()`` forgets the program) gives its pipeline."""

    def __init__(self) -> None:
        self.created: list[StreamExecutionEnvironment] = []
        #: A copy of each environment as ``execute()`` found it, program and settings.
        self.executed: list[StreamExecutionEnvironment] = []


_WATCHES: list[ProgramWatch] = []


@contextlib.contextmanager
def watch_programs() -> Iterator[ProgramWatch]:
    """Record the environments made and the programs executed in this block."""
    watch = ProgramWatch()
    _WATCHES.append(watch)
    try:
        yield watch
    finally:
        _WATCHES.remove(watch)


class StreamExecutionEnvironment:
    """The context of one streaming program, like Flink's local environment.

    Transformation ids start at 1 in every environment. The default parallelism is the
    number of CPU cores, as in Flink's local environment.
    """

    #: The API its programs are written in: Java's DataStream API here, PyFlink's in
    #: ``flowmagic.datastream`` (see :class:`~flowmagic.vocabulary.dialect.ApiDialect`).
    dialect: ApiDialect = JAVA

    def __init__(self, parallelism: int | None = None):
        self._parallelism = (
            check_parallelism(parallelism, "Parallelism") if parallelism is not None else (os.cpu_count() or 1)
        )
        self._max_parallelism = -1
        self._chaining_enabled = True
        self._runtime_mode = RuntimeExecutionMode.STREAMING
        self._last_id = 0
        self._transformations: list[Transformation] = []
        #: The declared record type of each transformation that has one, by id.
        self._types: dict[int, TypeInformation] = {}
        self._checkpoint_config = CheckpointConfig()
        self._savepoint_path: str | None = None
        self._allow_non_restored_state = False
        #: ``execution.checkpointing.savepoint-dir``.
        self._savepoint_directory: str | None = None
        #: The ``restart-strategy.*`` options configured so far, and the strategy they set.
        self._restart_settings: dict[str, str] = {}
        self._restart_strategy: RestartStrategy | None = None
        #: ``pipeline.name``: the job's name when ``execute()`` names none.
        self._pipeline_name: str | None = None
        #: Flink's ExecutionConfig: the global job parameters and the auto-watermark interval.
        self._execution_config = ExecutionConfig(self)
        for watch in _WATCHES:
            watch.created.append(self)

    @classmethod
    def get_execution_environment(cls, configuration: Configuration | None = None) -> StreamExecutionEnvironment:
        """A new environment, set up from ``configuration`` (see :meth:`configure`)."""
        env = cls()
        if configuration is not None:
            env.configure(configuration)
        return env

    def configure(self, configuration: Configuration) -> StreamExecutionEnvironment:
        """Apply the options ``configuration`` sets, as Flink does; options it does not set
        keep their values. Read: ``parallelism.default``, ``pipeline.max-parallelism``,
        ``execution.runtime-mode``, ``pipeline.name`` (the job name when ``execute()`` is given
        none), ``pipeline.global-job-parameters``, ``pipeline.operator-chaining.enabled``,
        ``pipeline.auto-watermark-interval`` (0 turns periodic watermarks off; otherwise
        watermarks follow flowmagic's schedule: after every record in bounded runs, at epoch
        ends in continuous ones),
        ``execution.checkpointing.interval``, ``execution.checkpointing.dir`` (or
        ``state.checkpoints.dir``), ``execution.checkpointing.savepoint-dir`` (or
        ``state.savepoints.dir``), ``execution.savepoint.path``,
        ``execution.savepoint.ignore-unclaimed-state``, and ``restart-strategy.type`` with its
        ``restart-strategy.*`` options (see :mod:`~flowmagic.vocabulary.restart_strategy`).
        Like Flink, other keys are ignored:
        Flink's cluster, memory and state-backend options have no meaning here."""
        if not isinstance(configuration, Configuration):
            raise InvalidTypeError(f"configure() expects a Configuration, got {configuration!r}")
        settings = configuration.to_dict()
        if "parallelism.default" in settings:
            self.set_parallelism(option_int(settings, "parallelism.default"))
        if "pipeline.max-parallelism" in settings:
            self.set_max_parallelism(option_int(settings, "pipeline.max-parallelism"))
        if "execution.runtime-mode" in settings:
            self.set_runtime_mode(settings["execution.runtime-mode"])
        if "pipeline.name" in settings:
            self._pipeline_name = settings["pipeline.name"]
        for key in ("pipeline.operator-chaining.enabled", "pipeline.operator-chaining"):
            if key in settings:
                self._chaining_enabled = option_bool(settings, key)
                break
        if "pipeline.auto-watermark-interval" in settings:
            self._execution_config.set_auto_watermark_interval(
                option_millis(settings, "pipeline.auto-watermark-interval")
            )
        if "execution.checkpointing.interval" in settings:
            self.enable_checkpointing(option_millis(settings, "execution.checkpointing.interval"))
        storage = settings.get("execution.checkpointing.dir") or settings.get("state.checkpoints.dir")
        if storage is not None:
            self._checkpoint_config.set_checkpoint_storage(storage)
        if "execution.checkpointing.externalized-checkpoint-retention" in settings:
            self._checkpoint_config.set_externalized_checkpoint_retention(
                settings["execution.checkpointing.externalized-checkpoint-retention"]
            )
        for key in ("execution.checkpointing.num-retained", "state.checkpoints.num-retained"):
            if key in settings:
                self._checkpoint_config.set_num_retained_checkpoints(option_int(settings, key))
                break
        savepoints = settings.get("execution.checkpointing.savepoint-dir") or settings.get("state.savepoints.dir")
        if savepoints is not None:
            self._savepoint_directory = savepoints
        if any(key in RESTART_OPTIONS for key in settings):
            restart_settings = {**self._restart_settings, **{k: v for k, v in settings.items() if k in RESTART_OPTIONS}}
            self._restart_strategy = RestartStrategy.from_settings(restart_settings)
            self._restart_settings = restart_settings
        if "pipeline.global-job-parameters" in settings:
            self._execution_config.set_global_job_parameters(
                _job_parameters(settings["pipeline.global-job-parameters"])
            )
        if "execution.savepoint.path" in settings:
            self._savepoint_path = settings["execution.savepoint.path"]
        if "execution.savepoint.ignore-unclaimed-state" in settings:
            self._allow_non_restored_state = option_bool(settings, "execution.savepoint.ignore-unclaimed-state")
        return self

    def __repr__(self) -> str:
        return (
            f"<StreamExecutionEnvironment parallelism={self._parallelism} mode={self._runtime_mode} "
            f"operators={len(self._transformations)}>"
        )

    # -- settings -------------------------------------------------------------------------

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        """Default parallelism of operators created from now on (existing ones keep theirs)."""
        self._parallelism = check_parallelism(parallelism, "Parallelism")
        return self

    def get_parallelism(self) -> int:
        return self._parallelism

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        """Job-wide max parallelism (``pipeline.max-parallelism``) for operators without their own."""
        self._max_parallelism = check_max_parallelism(max_parallelism)
        return self

    def get_max_parallelism(self) -> int:
        return self._max_parallelism

    def disable_operator_chaining(self) -> StreamExecutionEnvironment:
        """Run every operator as its own task."""
        self._chaining_enabled = False
        return self

    def is_chaining_enabled(self) -> bool:
        return self._chaining_enabled

    def set_runtime_mode(self, mode: RuntimeExecutionMode | str) -> StreamExecutionEnvironment:
        """STREAMING (default), BATCH, or AUTOMATIC (BATCH when every source is bounded)."""
        try:
            self._runtime_mode = RuntimeExecutionMode(str(mode).upper())
        except ValueError:
            raise ProgramError(f"Unknown runtime mode {mode!r}: use STREAMING, BATCH or AUTOMATIC.") from None
        return self

    def get_runtime_mode(self) -> RuntimeExecutionMode:
        return self._runtime_mode

    def enable_checkpointing(self, interval: int, mode: object = None) -> StreamExecutionEnvironment:
        """Checkpoint every ``interval`` ms (exactly once: ``mode`` is accepted for Flink's
        signature; flowmagic's epochs are always exactly once)."""
        self._checkpoint_config.set_checkpoint_interval(interval)
        return self

    def get_checkpoint_config(self) -> CheckpointConfig:
        return self._checkpoint_config

    def get_checkpoint_interval(self) -> int:
        return self._checkpoint_config.get_checkpoint_interval()

    def continuous_options(
        self, savepoint_path: str | None = None, allow_non_restored_state: bool | None = None
    ) -> ContinuousOptions:
        """How an unbounded program runs: its checkpointing, restore (``savepoint_path`` and
        ``allow_non_restored_state`` override the configured ones) and restart settings."""
        interval = self._checkpoint_config.get_checkpoint_interval()
        return ContinuousOptions(
            checkpoint_interval_ms=interval if interval > 0 else None,
            checkpoint_storage=self._checkpoint_config.get_checkpoint_storage(),
            checkpoint_retention=self._checkpoint_config.get_externalized_checkpoint_retention().name,
            checkpoints_retained=self._checkpoint_config.get_num_retained_checkpoints(),
            savepoint_path=savepoint_path if savepoint_path is not None else self._savepoint_path,
            allow_non_restored_state=(
                allow_non_restored_state if allow_non_restored_state is not None else self._allow_non_restored_state
            ),
            restart_strategy=self._restart_strategy,
            savepoint_directory=self._savepoint_directory,
        )

    def get_config(
        self,
        job_name: str | None = None,
        *,
        parallelism: int | None = None,
        runtime_mode: RuntimeExecutionMode | str | None = None,
    ) -> PipelineConfig:
        """The settings graphs are generated with; ``parallelism`` and ``runtime_mode``
        override the environment's for one generation (like ``flink run -p N``)."""
        return self._pipeline_config(job_name, parallelism=parallelism, runtime_mode=runtime_mode)

    def _pipeline_config(
        self,
        job_name: str | None = None,
        *,
        parallelism: int | None = None,
        runtime_mode: RuntimeExecutionMode | str | None = None,
    ) -> PipelineConfig:
        mode = self._runtime_mode if runtime_mode is None else RuntimeExecutionMode(str(runtime_mode).upper())
        return PipelineConfig(
            parallelism=self._parallelism if parallelism is None else check_parallelism(parallelism, "Parallelism"),
            max_parallelism=self._max_parallelism,
            chaining_enabled=self._chaining_enabled,
            runtime_mode=mode,
            job_name=job_name if job_name is not None else self._pipeline_name,
            override_parallelism=parallelism is not None,
            job_parameters=tuple(self._execution_config.get_global_job_parameters().items()),
            auto_watermark_interval_ms=self._execution_config.get_auto_watermark_interval(),
            dialect=self.dialect,
        )

    # -- the builder's protocol: what the streams and other front ends (SQL) write with ----

    def new_id(self) -> int:
        """A new transformation id (Flink's ``Transformation.getNewNodeId()``, per environment)."""
        self._last_id += 1
        return self._last_id

    def add_operator(self, transformation: Transformation) -> None:
        """Register ``transformation`` as part of the program (Flink's ``addOperator``): the
        graphs are generated from the registered transformations and their inputs."""
        self._transformations.append(transformation)

    def declare_type(self, transformation: Transformation, type_info: TypeInformation | None) -> None:
        """Declare the record type of ``transformation``'s output (None declares nothing)."""
        if type_info is not None:
            self._types[transformation.id] = type_info

    def declared_type(self, transformation: Transformation) -> TypeInformation | None:
        """The record type declared for ``transformation``'s output, else the dialect's
        type of undeclared records."""
        return self._types.get(transformation.id, self.dialect.undeclared_type)

    @property
    def transformations(self) -> list[Transformation]:
        """The operators and sinks registered so far, in creation order."""
        return list(self._transformations)

    # -- sources --------------------------------------------------------------------------

    def _source(
        self,
        name: str,
        operator: OperatorSpec,
        *,
        parallelism: int | None = None,
        bounded: bool = True,
        legacy: bool = False,
        non_parallel: bool = False,
        max_parallelism: int = -1,
        output_type: TypeInformation | None = None,
    ) -> DataStream:
        t = SourceTransformation(
            id=self.new_id(),
            name=name,
            parallelism=self._parallelism if parallelism is None else parallelism,
            parallelism_configured=parallelism is not None,
            max_parallelism=max_parallelism,
            operator=operator,
            chaining_strategy=ChainingStrategy.HEAD if legacy else ChainingStrategy.ALWAYS,
            non_parallel=non_parallel,
            bounded=bounded,
            legacy=legacy,
            call_site=call_site(),
        )
        self.declare_type(t, output_type)
        return DataStream(self, t)

    def from_source(
        self,
        source: Source,
        watermark_strategy: WatermarkStrategy,
        source_name: str,
        type_info: TypeInformation | None = None,
    ) -> DataStream:
        """Records of a unified ``source`` (``FileSource``, ``NumberSequenceSource``,
        ``DataGeneratorSource``), as Flink's
        ``fromSource``: vertex ``Source: <source_name>`` at the default parallelism, bounded or
        not as the source is. The source applies ``watermark_strategy`` itself (no operator of
        its own in the graphs, as in Flink)."""
        if not isinstance(source, Source):
            raise InvalidTypeError(
                "from_source() expects a FileSource, NumberSequenceSource or DataGeneratorSource, "
                f"got {type(source).__name__}"
            )
        if not isinstance(watermark_strategy, WatermarkStrategy):
            raise InvalidTypeError(f"from_source() expects a WatermarkStrategy, got {watermark_strategy!r}")
        if not isinstance(source_name, str):
            raise InvalidTypeError(f"from_source() source_name must be a string, got {source_name!r}")
        check_type_info(type_info, "from_source() type_info")
        spec = source.operator_spec()
        params = spec.params
        assert isinstance(params, SourceParams), f"{type(source).__name__} made no source operator"
        if watermark_strategy.generates_watermarks or watermark_strategy.timestamp_assigner is not None:
            spec = OperatorSpec(spec.kind, replace(params, watermark_strategy=watermark_strategy))
        return self._source(
            source_name,
            spec,
            bounded=source.is_bounded(),
            output_type=type_info if type_info is not None else source.produced_type(),
        )

    def add_source(
        self, source_func: SourceFunction, source_name: str = "Custom Source", type_info: TypeInformation | None = None
    ) -> DataStream:
        """PyFlink's ``add_source`` takes a Java ``SourceFunction``, which flowmagic cannot run:
        it raises, saying what to use instead."""
        raise java_source_unsupported(source_func)

    def from_collection(self, collection: Iterable[Any], type_info: TypeInformation | None = None) -> DataStream:
        """A bounded source of the given records, at parallelism 1; ``type_info`` declares their
        type. As in PyFlink, tuples declared ``Types.ROW_NAMED(...)`` (or ``Types.ROW``) become
        Rows with those field names (``row.name``)."""
        check_type_info(type_info, "from_collection() type_info")
        if isinstance(collection, (str, bytes)) or not isinstance(collection, Iterable):
            raise ProgramError(f"from_collection() expects a list or other collection of records, got {collection!r}.")
        data = list(collection)
        if not data:
            raise ProgramError("Collection must not be empty")
        if type_info is not None:
            data = [as_declared(record, type_info) for record in data]
        return self._source(
            "Collection Source",
            OperatorSpec(OperatorKind.SOURCE_COLLECTION, CollectionSourceParams(data=data)),
            parallelism=1,
            output_type=type_info,
        )

    def from_elements(self, *elements: Any, type_info: TypeInformation | None = None) -> DataStream:
        """``from_collection(elements, type_info)``."""
        return self.from_collection(elements, type_info)

    def from_sequence(self, start: int, end: int) -> DataStream:
        """The numbers ``start..end`` (inclusive), split over the env parallelism."""
        for value in (start, end):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ProgramError(f"from_sequence() expects ints, got {value!r}.")
        if start > end:
            raise ProgramError("Start of sequence must not be greater than the end")
        spec = OperatorSpec(OperatorKind.SOURCE_SEQUENCE, SequenceSourceParams(start=start, end=end))
        return self._source("Sequence Source", spec, output_type=Types.LONG())

    def read_text_file(self, path: str, charset_name: str = "UTF-8") -> DataStream:
        """The lines of a text file (or a directory of them), as Flink 1.x's ``readTextFile``.

        Any path Spark's Hadoop file system reads works at run time (``file://``, ``hdfs://``,
        ``s3a://``). As in Flink 1.x this is a monitoring source at parallelism 1 plus a
        split reader at the env parallelism.
        """
        if not isinstance(path, str) or not path:
            raise ProgramError("read_text_file() expects a non-empty path.")
        monitor = self._source(
            "Custom File Source",
            OperatorSpec(OperatorKind.SOURCE_FILE_MONITOR, FileMonitorSourceParams(path=path)),
            parallelism=1,
            legacy=True,
            non_parallel=True,
            max_parallelism=1,
        )
        reader = OneInputTransformation(
            id=self.new_id(),
            name="Split Reader: Custom File Source",
            parallelism=self._parallelism,
            inputs=[monitor.transformation],
            operator=OperatorSpec(
                OperatorKind.FILE_SPLIT_READER, FileSplitReaderParams(path=path, charset=charset_name)
            ),
            chaining_strategy=ChainingStrategy.HEAD,
            call_site=call_site(),
        )
        self.add_operator(reader)
        self.declare_type(reader, Types.STRING())
        return DataStream(self, reader)

    def socket_text_stream(self, hostname: str, port: int, delimiter: str = "\n", max_retry: int = 0) -> DataStream:
        """Lines read from a TCP socket: an unbounded, non-parallel source."""
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port < 65536:
            raise ProgramError(f"port is out of range: {port!r}")
        return self._source(
            "Socket Stream",
            OperatorSpec(
                OperatorKind.SOURCE_SOCKET,
                SocketSourceParams(host=hostname, port=port, delimiter=delimiter, max_retry=max_retry),
            ),
            parallelism=1,
            bounded=False,
            legacy=True,
            non_parallel=True,
            output_type=Types.STRING(),
        )

    def from_spark(self, frame: Any, source_name: str = "Spark Source") -> DataStream:
        """A Spark streaming DataFrame (``spark.readStream...``: rate, socket, files, Kafka
        through your own connector) as an unbounded source: each micro-batch's rows, as
        ``pyspark.sql.Row`` records, spread over the source's subtasks."""
        if not getattr(frame, "isStreaming", False):
            raise ProgramError(
                f"from_spark() expects a streaming DataFrame (spark.readStream...), got {type(frame).__name__}; "
                "for a static DataFrame use from_collection(frame.collect())."
            )
        return self._source(
            source_name,
            OperatorSpec(OperatorKind.SOURCE_SPARK, SparkSourceParams(frame=DriverSide(frame))),
            bounded=False,
        )

    def from_datagen(
        self,
        generator: Callable[..., Any] | None = None,
        *,
        count: int | None = None,
        rows_per_second: float | None = None,
        seed: int = 0,
    ) -> DataStream:
        """Generated records: ``generator(index)`` or ``generator(index, rng)`` for index 0, 1, ...

        ``count`` bounds the source (None: unbounded); ``rows_per_second`` throttles it;
        ``rng`` is a ``random.Random`` seeded from ``seed`` and the index, so every record is
        the same on every run whatever the parallelism.
        """
        if generator is not None:
            check_callable(generator, "from_datagen()")
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
            raise ProgramError(f"from_datagen(count=...) must be a non-negative int, got {count!r}.")
        if rows_per_second is not None and rows_per_second <= 0:
            raise ProgramError(f"from_datagen(rows_per_second=...) must be positive, got {rows_per_second!r}.")
        arity = 1
        if generator is not None:
            try:
                arity = len(inspect.signature(generator).parameters)
            except (TypeError, ValueError):
                arity = 1
        spec = datagen_operator(generator, arity=arity, count=count, rows_per_second=rows_per_second, seed=seed)
        return self._source("Data Generator", spec, bounded=count is not None)

    # -- graphs ---------------------------------------------------------------------------

    def get_stream_graph(
        self,
        job_name: str | None = None,
        *,
        parallelism: int | None = None,
        runtime_mode: RuntimeExecutionMode | str | None = None,
    ) -> StreamGraph:
        """Generate the StreamGraph of the program so far.

        ``parallelism`` and ``runtime_mode`` override the environment's settings for this
        graph only. Unlike Flink, the program is kept (not cleared) so that it can be
        inspected and run again, as a notebook expects.
        """
        return self._generate(self._transformations, job_name, parallelism=parallelism, runtime_mode=runtime_mode)

    def stream_graph_of(self, roots: list[Transformation], job_name: str | None = None) -> StreamGraph:
        """The StreamGraph of ``roots`` and their inputs only, not of the whole program: how a
        second front end (Flink's table planner) builds the graph of one statement."""
        return self._generate(list(roots), job_name)

    def _generate(self, roots: list[Transformation], job_name: str | None, **overrides: Any) -> StreamGraph:
        return passes.generate(roots, self._pipeline_config(job_name, **overrides), self.new_id)

    def get_execution_plan(self) -> str:
        """Flink's StreamGraph JSON (``getExecutionPlan()``), byte for byte."""
        return self.get_stream_graph().to_json_plan()

    def get_job_graph(self, job_name: str | None = None) -> JobGraph:
        """The JobGraph: chained operators and vertex ids, identical to Flink's."""
        return self.get_stream_graph(job_name).get_job_graph()

    def get_execution_graph(self, job_name: str | None = None) -> ExecutionGraph:
        """The ExecutionGraph: subtasks and their wiring."""
        return passes.build(self.get_stream_graph(job_name)).execution_graph

    # -- execution ------------------------------------------------------------------------

    def _collect_sink(self, stream: DataStream) -> LegacySinkTransformation:
        sink_id = self.new_id()
        return LegacySinkTransformation(
            id=sink_id,
            name="Data stream collect sink",
            parallelism=1,
            inputs=[stream.transformation],
            parallelism_configured=True,
            uid=f"dataStreamCollect_{sink_id}",
            operator=OperatorSpec(OperatorKind.COLLECT),
            call_site=call_site(),
        )

    def execute(self, job_name: str | None = None, *, executor: str = "spark", **options: Any) -> JobResult:
        """Run the program and wait for it; returns the job's result.

        ``executor`` is ``"spark"`` (the notebook's SparkSession, ``spark=`` to choose one) or
        ``"local"`` (this Python process, no JVM: the reference executor, same records). An
        unbounded program runs until it is interrupted, printing as it goes.
        """
        # The executors load the runtime: found when first needed (as Flink finds its
        # PipelineExecutor), not for every program that is only drawn.
        from flowmagic import executors

        graph = self.get_stream_graph(job_name)
        self._watched_execution()
        options.setdefault("continuous", self.continuous_options())
        return executors.execute(graph, executor=executor, **options)

    def execute_async(self, job_name: str | None = None, *, spark: Any = None, executor: str = "spark") -> Any:
        """Start the program and return its client at once: ``get_job_status()``,
        ``cancel()``, ``wait()``, ``result()``, and for an unbounded program
        ``trigger_savepoint(path)`` and ``stop_with_savepoint(path)``; its print sinks print
        as it goes (a bounded program's printed lines are in ``result().printed``)."""
        from flowmagic import executors

        graph = self.get_stream_graph(job_name)
        self._watched_execution()
        return executors.submit(graph, executor=executor, spark=spark, continuous=self.continuous_options(), echo=True)

    def _watched_execution(self) -> None:
        for watch in _WATCHES:
            program = copy.copy(self)
            program._transformations = list(self._transformations)
            program._types = dict(self._types)
            program._execution_config = copy.copy(self._execution_config)
            watch.executed.append(program)

    def collect_stream(
        self, stream: DataStream, job_name: str | None = None, limit: int | None = None, executor: str = "spark"
    ) -> Iterator[Any]:
        """Run the program with a collect sink on ``stream`` and return its records (the first
        ``limit``): ``stream.execute_and_collect()``, Flink's ``executeAndCollect``."""
        from flowmagic import executors

        sink = self._collect_sink(stream)
        graph = self._generate([*self._transformations, sink], job_name)
        return executors.collect(graph, sink.id, executor=executor, continuous=self.continuous_options(), limit=limit)


def _job_parameters(text: str) -> dict[str, str]:
    """Flink's map option format, ``key1:value1,key2:value2``."""
    parameters = {}
    for entry in text.split(","):
        key, separator, value = entry.partition(":")
        if not separator or not key.strip():
            raise InvalidArgumentError(
                f"Could not parse value {text!r} for key 'pipeline.global-job-parameters': "
                "expected 'key1:value1,key2:value2'."
            )
        parameters[key.strip()] = value.strip()
    return parameters
