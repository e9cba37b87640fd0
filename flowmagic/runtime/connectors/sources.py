"""Sources: each subtask produces its own share of the input, as Flink's split readers do.

A source yields *batches* of records (lists) so that the chain behind it can use its fast
path; records carry no timestamps. Each source class registers its kind; a connector's names
its identifier and makes its operator from a table's options (:mod:`flowmagic.runtime.connectors.factories`).
In the continuous mode an unbounded source opens a *feed* on the driver
(:mod:`flowmagic.runtime.continuous.feeds`), and its subtasks make each epoch's records of
their share of the feed's input; a bounded one is read whole in the job's first epoch.
"""

from __future__ import annotations

import itertools
import os
import random
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, ClassVar
from urllib.parse import urlparse

from flowmagic.errors import UnsupportedSourceError, ValidationException
from flowmagic.graph.operator_params import (
    CollectionSourceParams,
    DatagenSourceParams,
    FileMonitorSourceParams,
    FileSplitReaderParams,
    SequenceSourceParams,
    SocketSourceParams,
    SourceParams,
    SparkSourceParams,
)
from flowmagic.graph.operators import OperatorKind, OperatorSpec
from flowmagic.runtime.connectors.factories import Column, ConnectorSource, TableContext, TableOptions
from flowmagic.runtime.continuous.feeds import Feed, FeedContext, OffsetFeed, SocketFeed, SparkFeed
from flowmagic.runtime.operators.operator import Operator, TaskInfo
from flowmagic.runtime.records import BATCH_SIZE
from flowmagic.runtime.registry import register
from flowmagic.vocabulary.types import Row

__all__ = ["DatagenFields", "Source", "chunks", "generate", "local_path", "split_file"]

# Small enough that splits spread evenly over the readers, large enough to read efficiently.
SPLIT_SIZE = 4 << 20
_READ_BLOCK = 1 << 20


class Source:
    """Produces the records of one source subtask."""

    #: A source hands nothing to the driver and is never pre-aggregated into.
    emits_results = False
    combinable = False
    #: The connector's identifier, by which tables name it (None: not a connector).
    identifier: ClassVar[str | None] = None

    def __init__(self, params: SourceParams, task: TaskInfo):
        self.task = task

    def batches(self) -> Iterator[list[Any]]:
        """A bounded source: all of the subtask's records."""
        raise NotImplementedError

    def epoch_batches(self, inputs: list[Any]) -> Iterator[list[Any]]:
        """An unbounded source in the continuous mode: the records of the subtask's share of
        an epoch's input (what its feed's ``epoch_input`` gave it). By default the input is
        the records."""
        yield from chunks(inputs)

    @classmethod
    def open_feed(cls, params: Any, context: FeedContext) -> Feed:
        """An unbounded source in the continuous mode: its feed, on the driver."""
        raise UnsupportedSourceError(f"{context.name!r} has no feed for the continuous mode")


def _share(total: int, index: int, parallelism: int) -> range:
    """Contiguous share ``index`` of ``range(total)``, as Flink splits sequences."""
    return range(total * index // parallelism, total * (index + 1) // parallelism)


def chunks(values: Any) -> Iterator[list[Any]]:
    """``values`` in lists of at most ``BATCH_SIZE``."""
    chunk: list[Any] = []
    for value in values:
        chunk.append(value)
        if len(chunk) == BATCH_SIZE:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@register(OperatorKind.SOURCE_COLLECTION)
class CollectionSource(Source):
    def __init__(self, params: CollectionSourceParams, task: TaskInfo):
        super().__init__(params, task)
        self.data = params.data

    def batches(self) -> Iterator[list[Any]]:
        data = self.data
        share = _share(len(data), self.task.index, self.task.parallelism)
        yield from chunks(data[share.start : share.stop])


@register(OperatorKind.SOURCE_SEQUENCE)
class SequenceSource(Source):
    def __init__(self, params: SequenceSourceParams, task: TaskInfo):
        super().__init__(params, task)
        self.start, self.end = params.start, params.end

    def batches(self) -> Iterator[list[Any]]:
        start, end = self.start, self.end
        share = _share(end - start + 1, self.task.index, self.task.parallelism)
        for first in range(share.start, share.stop, BATCH_SIZE):
            yield list(range(start + first, start + min(first + BATCH_SIZE, share.stop)))


def generate(params: DatagenSourceParams, index: int) -> Any:
    """Record ``index`` of a data generator: ``generator(index)``, or ``generator(index, rng)``
    with an ``rng`` seeded by the seed and the index, so it is the same on every run."""
    generator = params.generator
    if generator is None:
        return index
    if params.arity >= 2:
        return generator(index, random.Random(f"{params.seed}:{index}"))
    return generator(index)


@register(OperatorKind.SOURCE_DATAGEN)
class DatagenSource(Source):
    """Generated records: Flink's ``datagen`` connector (a table's rows from its columns'
    ``fields.<name>.*`` options) and ``from_datagen`` / ``DataGeneratorSource`` (records of a
    function of the index); unbounded without a count, fed by offsets in the continuous mode."""

    identifier = "datagen"

    def __init__(self, params: DatagenSourceParams, task: TaskInfo):
        super().__init__(params, task)
        self.params = params

    def batches(self) -> Iterator[list[Any]]:
        count = self.params.count
        if count is None:
            raise UnsupportedSourceError("unbounded data generator")
        rate = self.params.rows_per_second
        share = _share(count, self.task.index, self.task.parallelism)
        per_subtask_rate = rate / self.task.parallelism if rate else None
        started = time.monotonic()
        batch: list[Any] = []
        for produced, index in enumerate(share):
            batch.append(generate(self.params, index))
            if per_subtask_rate:
                ahead = (produced + 1) / per_subtask_rate - (time.monotonic() - started)
                if ahead > 0:
                    yield batch
                    batch = []
                    time.sleep(ahead)
            if len(batch) >= BATCH_SIZE:
                yield batch
                batch = []
        if batch:
            yield batch

    def epoch_batches(self, inputs: list[Any]) -> Iterator[list[Any]]:
        params = self.params
        for start, end in inputs:
            yield from chunks(generate(params, index) for index in range(start, end))

    @classmethod
    def open_feed(cls, params: DatagenSourceParams, context: FeedContext) -> Feed:
        return OffsetFeed(context, params.rows_per_second)

    @classmethod
    def create_source(cls, table: TableContext) -> ConnectorSource:
        """Flink's ``datagen`` table: ``rows-per-second`` (10000), ``number-of-rows`` (none:
        unbounded, unless a ``sequence`` field ends first), and per column
        ``fields.<name>.kind`` (``random``: ``min``/``max``, ``length`` of strings;
        ``sequence``: ``start``/``end``)."""
        options = TableOptions("datagen", table, optional=("rows-per-second", "number-of-rows"))
        rows_per_second = options.number("rows-per-second", 10000.0)
        count = options.integer("number-of-rows")
        fields = DatagenFields.of(table, options)
        options.validate()
        if fields.rows is not None:
            count = fields.rows if count is None else min(count, fields.rows)
        spec = OperatorSpec(
            OperatorKind.SOURCE_DATAGEN,
            DatagenSourceParams(generator=fields, arity=1, count=count, rows_per_second=rows_per_second, seed=0),
        )
        return ConnectorSource(spec, bounded=count is not None)


#: Java's ranges of Flink SQL's integer types, the bounds of their random values.
_INTEGER_RANGES = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "INTEGER": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
}
_FLOAT_TYPES = ("FLOAT", "DOUBLE", "REAL")
#: Flink's defaults of a random DOUBLE: Java's Double.MIN_VALUE (the least positive) to MAX_VALUE.
_DOUBLE_MIN, _DOUBLE_MAX = 5e-324, 1.7976931348623157e308
_STRING_TYPES = ("STRING", "VARCHAR", "CHAR")


def _base_type(type_text: str) -> str:
    """The type's root name: ``INT`` of ``INT NOT NULL``, ``VARCHAR`` of ``VARCHAR(10)``."""
    return type_text.split("(")[0].split()[0].upper()


def _decimal_field(column: Column, prefix: str, options: TableOptions) -> _Field:
    """A random DECIMAL(p, s) column: between ``min`` and ``max`` (the type's range), rounded
    to its scale."""
    sizes = [int(size) for size in re.findall(r"\d+", column.type.split(")")[0])]
    precision, scale = (sizes + [10, 0][len(sizes) :])[:2]
    largest = float(10 ** (precision - scale)) - 10.0**-scale
    options.consume(prefix + "min", prefix + "max")
    low, high = options.number(prefix + "min", -largest), options.number(prefix + "max", largest)
    return _Field("random", "DECIMAL", low, high, unit=Decimal(1).scaleb(-scale))


_GENERATED = (
    "TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, BOOLEAN, CHAR, VARCHAR and STRING columns "
    "(a sequence: integers and strings)."
)


def _unsupported_type(column: Column) -> ValidationException:
    error = ValidationException(f"Unsupported type: {column.type}")
    error.add_note(f"flowmagic's datagen generates {_GENERATED}")
    return error


@dataclass(frozen=True)
class _Field:
    kind: str
    base: str
    low: Any = None
    high: Any = None
    length: int = 100
    #: A DECIMAL's unit in the last place (``Decimal("0.01")`` for a scale of 2).
    unit: Decimal | None = None
    #: The column, when flowmagic cannot generate its type: reading it fails, planning not.
    unsupported: Column | None = None

    def check(self) -> None:
        """Refuse to generate a column of a type flowmagic's datagen does not make."""
        if self.unsupported is not None:
            column = self.unsupported
            raise ValidationException(
                f"flowmagic's datagen does not generate {column.type} values yet (column '{column.name}'); "
                f"it generates {_GENERATED}"
            )


try:
    import numpy as _numpy_module
except ImportError:  # an executor with nothing but PySpark: the pure-Python mix
    _numpy: Any = None
else:
    _numpy = _numpy_module

_MASK = (1 << 64) - 1
_GOLDEN, _MIX1, _MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _mixes_pure(salt: int, start: int, end: int) -> list[int]:
    """SplitMix64's finalizer of ``index * golden ratio + salt`` for each index: well
    spread 64-bit values, the same for the same index and salt on every run."""
    mixes = []
    for index in range(start, end):
        z = (index * _GOLDEN + salt) & _MASK
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        mixes.append(z ^ (z >> 31))
    return mixes


def _mixes_numpy(salt: int, start: int, end: int) -> Any:
    """:func:`_mixes_pure` as a numpy ``uint64`` array: the same values (numpy's unsigned
    arithmetic wraps modulo 2**64), ten times as fast or more."""
    z = _numpy.arange(start, end, dtype=_numpy.uint64) * _numpy.uint64(_GOLDEN) + _numpy.uint64(salt & _MASK)
    z = (z ^ (z >> _numpy.uint64(30))) * _numpy.uint64(_MIX1)
    z = (z ^ (z >> _numpy.uint64(27))) * _numpy.uint64(_MIX2)
    return z ^ (z >> _numpy.uint64(31))


def _vectorized(start: int, end: int) -> bool:
    # numpy pays off from a few dozen rows on (a row at a time, it costs 5 times as much).
    return _numpy is not None and start >= 0 and end <= _MASK and end - start >= 32


def _mixes(salt: int, start: int, end: int) -> list[int]:
    if _vectorized(start, end):
        return _mixes_numpy(salt, start, end).tolist()
    return _mixes_pure(salt, start, end)


def _column_values(field: _Field, position: int, seed: int, start: int, end: int) -> list[Any]:
    field.check()
    if field.kind == "sequence":
        values = range(field.low + start, field.low + end)
        return [str(v) for v in values] if field.base in _STRING_TYPES else list(values)
    salt = (seed * 0x100000001B3 + position * 0xD6E8FEB86659FD93 + 1) & _MASK
    if field.base in _INTEGER_RANGES:
        low, span = field.low, field.high - field.low + 1
        if _vectorized(start, end) and span < 1 << 63:
            # The remainders are below 2**63 and low + remainder within the column's range:
            # int64 holds every step.
            remainders = (_mixes_numpy(salt, start, end) % _numpy.uint64(span)).astype(_numpy.int64)
            return (remainders + _numpy.int64(low)).tolist()
        return [low + m % span for m in _mixes(salt, start, end)]
    mixes = _mixes(salt, start, end)
    if field.base in _FLOAT_TYPES:
        low, width = field.low, field.high - field.low
        return [low + (m >> 11) / (1 << 53) * width for m in mixes]
    if field.unit is not None:
        low, width, unit = field.low, field.high - field.low, field.unit
        return [Decimal(low + (m >> 11) / (1 << 53) * width).quantize(unit, ROUND_HALF_UP) for m in mixes]
    if field.base == "BOOLEAN":
        return [m & 1 == 1 for m in mixes]
    words = -(-field.length // 16)
    more = [_mixes(salt + 0x632BE59BD9B4E019 * (word + 1), start, end) for word in range(1, words)]
    return [
        "".join(f"{m:016x}" for m in (first, *(extra[i] for extra in more)))[: field.length]
        for i, first in enumerate(mixes)
    ]


@dataclass(frozen=True)
class DatagenFields:
    """The generator of a ``datagen`` table's rows: ``Row`` ``index`` of its columns, each
    random (a function of the row's index and column alone) or the ``index``-th of its sequence."""

    names: tuple[str, ...]
    fields: tuple[_Field, ...]
    #: How many rows the sequences have (None: no sequence field).
    rows: int | None = None

    def __call__(self, index: int) -> Row:
        return Row(**dict(zip(self.names, self.tuples(index, index + 1)[0], strict=True)))

    def tuples(
        self, start: int, end: int, seed: int = 0, columns: tuple[int, ...] | None = None, *extra: Any
    ) -> list[tuple[Any, ...]]:
        """Rows ``start`` to ``end - 1`` as tuples, each value a function of the seed, the
        row's index and its column alone (a 64-bit mix of them, no generator object per row):
        a replayed range makes the same rows, at a fraction of :meth:`__call__`'s cost. Only
        the ``columns`` at these positions (all by default), then the ``extra`` values."""
        positions = range(len(self.fields)) if columns is None else columns
        values: list[Any] = [_column_values(self.fields[p], p, seed, start, end) for p in positions]
        values.extend(itertools.repeat(value, end - start) for value in extra)
        return list(zip(*values, strict=True))

    @staticmethod
    def of(table: TableContext, options: TableOptions) -> DatagenFields:
        """The fields of ``table``'s columns, as its ``fields.<name>.*`` options say."""
        fields = []
        rows: int | None = None
        for column in table.columns:
            prefix = f"fields.{column.name}."
            base = _base_type(column.type)
            kind = options.string(prefix + "kind", "random")
            options.consume(prefix + "kind")
            numeric = base in _INTEGER_RANGES or base in _FLOAT_TYPES
            if kind == "sequence":
                if not (base in _INTEGER_RANGES or base in _STRING_TYPES):
                    raise _unsupported_type(column)
                options.consume(prefix + "start", prefix + "end")
                for bound in ("start", "end"):
                    if prefix + bound not in options.options:
                        raise ValidationException(
                            f"Could not find required property '{prefix}{bound}' for sequence generator."
                        )
                start, end = options.integer(prefix + "start"), options.integer(prefix + "end")
                assert start is not None and end is not None
                rows = end - start + 1 if rows is None else min(rows, end - start + 1)
                fields.append(_Field("sequence", base, start, end))
            elif kind == "random":
                if numeric:
                    options.consume(prefix + "min", prefix + "max")
                    bounds: tuple[float | None, float | None]
                    if base in _INTEGER_RANGES:
                        low, high = _INTEGER_RANGES[base]
                        bounds = options.integer(prefix + "min", low), options.integer(prefix + "max", high)
                    else:
                        low_float = options.number(prefix + "min", _DOUBLE_MIN)
                        bounds = low_float, options.number(prefix + "max", _DOUBLE_MAX)
                    fields.append(_Field("random", base, *bounds))
                elif base == "DECIMAL":
                    fields.append(_decimal_field(column, prefix, options))
                elif base in _STRING_TYPES:
                    options.consume(prefix + "length")
                    fields.append(_Field("random", base, length=options.integer(prefix + "length", 100) or 0))
                elif base == "BOOLEAN":
                    fields.append(_Field("random", base))
                else:
                    # Flink generates every type at random, so the table plans and explains
                    # as Flink's; only running it needs values flowmagic cannot make yet.
                    fields.append(_Field("random", base, unsupported=column))
            else:
                raise ValidationException(f"Unsupported generator kind: {kind}")
        return DatagenFields(tuple(column.name for column in table.columns), tuple(fields), rows)


class _EpochSource(Source):
    """An unbounded source: it has no records of its own to read; the continuous mode hands
    each epoch's records to its subtasks."""

    def batches(self) -> Iterator[list[Any]]:
        raise UnsupportedSourceError(f"{self.task.vertex_name!r} is unbounded: it runs in the continuous mode only")


@register(OperatorKind.SOURCE_SOCKET)
class SocketSource(_EpochSource):
    """``socket_text_stream`` and the ``socket`` connector: lines a reader on the driver
    logged, epoch by epoch."""

    identifier = "socket"

    @classmethod
    def open_feed(cls, params: SocketSourceParams, context: FeedContext) -> Feed:
        return SocketFeed(context, params.host, params.port, params.delimiter, params.max_retry)

    @classmethod
    def create_source(cls, table: TableContext) -> ConnectorSource:
        """The ``socket`` table of Flink's examples: ``hostname``, ``port``, ``format``
        (``raw``: each line is a record; ``csv``, ``json``: a row per line) and
        ``byte-delimiter`` (10, a newline)."""
        options = TableOptions("socket", table, required=("hostname", "port", "format"), optional=("byte-delimiter",))
        table_format = options.format()
        if options.raw_charset(table_format).replace("-", "").upper() != "UTF8":
            # The driver's socket reader decodes UTF-8, as socket_text_stream does.
            raise ValidationException("Invalid value for option 'raw.charset'.")
        host, port = options.string("hostname"), options.integer("port")
        delimiter = options.integer("byte-delimiter", 10)
        options.validate()
        assert port is not None and delimiter is not None
        if not 0 <= port < 65536:
            raise ValidationException("Invalid value for option 'port'.")
        assert host is not None
        spec = OperatorSpec(
            OperatorKind.SOURCE_SOCKET, SocketSourceParams(host=host, port=port, delimiter=chr(delimiter), max_retry=0)
        )
        return ConnectorSource(spec, bounded=False, parallelism=1, format=table_format)


@register(OperatorKind.SOURCE_SPARK)
class SparkSource(_EpochSource):
    """``from_spark``: the rows of a Spark streaming DataFrame's micro-batches, epoch by epoch."""

    @classmethod
    def open_feed(cls, params: SparkSourceParams, context: FeedContext) -> Feed:
        return SparkFeed(context, params.frame.value)


def local_path(path: str) -> str | None:
    """The local file system path of ``path`` (plain or ``file://``), else None."""
    parsed = urlparse(path)
    if parsed.scheme in ("", "file"):
        return parsed.path if parsed.scheme else path
    if len(parsed.scheme) == 1:  # a Windows drive letter
        return path
    return None


def split_file(path: str) -> list[tuple[str, int, int]]:
    """Splits ``(file, start, end)`` of a file or of every visible file under a directory."""
    files: list[str] = []
    if os.path.isdir(path):
        for root, directories, names in os.walk(path):
            directories[:] = sorted(d for d in directories if not d.startswith((".", "_")))
            files.extend(os.path.join(root, n) for n in sorted(names) if not n.startswith((".", "_")))
    elif os.path.exists(path):
        files.append(path)
    else:
        raise FileNotFoundError(f"The provided file path {path} does not exist.")
    splits = []
    for file in files:
        size = os.path.getsize(file)
        for start in range(0, max(size, 1), SPLIT_SIZE):
            splits.append((file, start, min(start + SPLIT_SIZE, size)))
    return splits


@register(OperatorKind.SOURCE_FILE_MONITOR)
class FileMonitorSource(Source):
    """Flink 1.x's ContinuousFileMonitoringFunction (PROCESS_ONCE): lists the splits."""

    def __init__(self, params: FileMonitorSourceParams, task: TaskInfo):
        super().__init__(params, task)
        self.path = params.path

    def batches(self) -> Iterator[list[Any]]:
        local = local_path(self.path)
        # Remote file systems are read by Spark's Hadoop reader straight into the split readers.
        if local is not None:
            yield split_file(local)


@register(OperatorKind.FILE_SPLIT_READER)
class FileSplitReader(Operator):
    """Reads the lines of each split it is sent (Hadoop's rule: a split owns the lines that
    start inside it; the first split also owns the first line)."""

    def process(self, value: Any, timestamp: int | None, side: int = 0) -> None:
        self.process_batch([value])

    def __init__(self, name: str, params: FileSplitReaderParams, task: TaskInfo):
        super().__init__(name, params, task)
        self.charset = params.charset

    def read_split(self, split: tuple[str, int, int]) -> Iterator[list[str]]:
        """The lines of ``split``, in batches."""
        return split_lines(*split, encoding=self.charset, batch=BATCH_SIZE)

    def process_batch_in_steps(self, values: list[Any]) -> Iterator[None]:
        if values and isinstance(values[0], str):  # lines from Spark's Hadoop reader
            self.output.collect_batch(values)
            return
        collect_batch = self.output.collect_batch
        for split in values:
            for lines in self.read_split(split):
                collect_batch(lines)
                yield

    def process_batch(self, values: list[Any]) -> None:
        for _step in self.process_batch_in_steps(values):
            pass


def split_lines(
    path: str, start: int, end: int, encoding: str = "utf-8", batch: int = BATCH_SIZE
) -> Iterator[list[str]]:
    """The lines that start in ``[start, end)`` of ``path``, ``batch`` at a time, without their
    line ends. Hadoop's rule splits a file: a split owns the lines that start in it, the first
    one also the first line."""
    with open(path, "rb") as file:
        if start > 0:
            file.seek(start - 1)
            if file.read(1) != b"\n":
                file.readline()
        position = file.tell()
        while position < end:
            # Whole lines only: read up to the split's end (or a block), then finish the line.
            block = file.read(min(_READ_BLOCK, end - position))
            if not block:
                break
            if not block.endswith(b"\n"):
                block += file.readline()
            position += len(block)
            text = block.decode(encoding)
            lines = text.split("\n")
            if text.endswith("\n"):
                lines.pop()
            if "\r" in text:
                lines = [line[:-1] if line.endswith("\r") else line for line in lines]
            for first in range(0, len(lines), batch):
                yield lines[first : first + batch]
