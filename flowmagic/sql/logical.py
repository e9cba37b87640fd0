"""Calcite's logical relational algebra, as Flink's SqlToRel conversion builds it.

Nodes are plain data; ``terms()`` gives the attributes the Abstract Syntax Tree prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowmagic.sql import digest
from flowmagic.sql.rex import InputRef, Literal, Rex
from flowmagic.sql.types import SqlType


@dataclass(frozen=True)
class Field:
    name: str
    type: SqlType


@dataclass(frozen=True)
class AggCall:
    """An aggregate call: ``function`` over input fields ``args`` (COUNT() has none)."""

    function: str
    args: tuple[int, ...]
    distinct: bool
    type: SqlType
    name: str
    #: The boolean input field that admits a row to this call (``FILTER (WHERE ...)``).
    filter: int | None = None

    def digest(self, names: list[str] | None = None) -> str:
        refs = [f"${a}" if names is None else names[a] for a in self.args]
        inner = ", ".join(refs)
        if self.distinct:
            inner = "DISTINCT " + inner
        text = f"{self.function}({inner})"
        if self.filter is None:
            return text
        return f"{text} FILTER {f'${self.filter}' if names is None else names[self.filter]}"


@dataclass(eq=False)
class RelNode:
    inputs: list[RelNode]
    fields: list[Field]

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    @property
    def kind(self) -> str:
        return type(self).__name__

    def terms(self) -> list[tuple[str, str]]:
        raise NotImplementedError


def unique_names(names: list[str]) -> list[str]:
    """Calcite's unique field names: a repeated name gets the first free suffix 0, 1, ..."""
    seen: set[str] = set()
    out = []
    for name in names:
        unique = name
        suffix = 0
        while unique in seen:
            unique = f"{name}{suffix}"
            suffix += 1
        seen.add(unique)
        out.append(unique)
    return out


def join_fields(left: list[Field], right: list[Field], join_type: str) -> list[Field]:
    """A join's output fields (Calcite's SqlValidatorUtil.deriveJoinRowType): the side an outer
    join pads with nulls has every field nullable, and the names are made unique."""
    fields = list(left) + list(right)
    if join_type in ("left", "full"):
        fields[len(left) :] = [Field(f.name, f.type.with_nullable(True)) for f in right]
    if join_type in ("right", "full"):
        fields[: len(left)] = [Field(f.name, f.type.with_nullable(True)) for f in left]
    names = unique_names([f.name for f in fields])
    return [Field(n, f.type) for n, f in zip(names, fields, strict=True)]


def row_type(fields: list[Field]) -> str:
    return "RecordType(" + ", ".join(f"{f.type.short()} {f.name}" for f in fields) + ")"


def tuples(rows: list[list[Literal]]) -> str:
    return (
        "["
        + ", ".join("{ " + ", ".join(digest.literal(v.value, v.type, suffix=False) for v in row) + " }" for row in rows)
        + "]"
    )


@dataclass(eq=False)
class LogicalTableScan(RelNode):
    path: tuple[str, ...] = ("", "", "")
    #: Whether the connector takes filters (Flink's SupportsFilterPushDown).
    filter_push_down: bool = False
    #: Whether the connector takes a projection (Flink's SupportsProjectionPushDown).
    projection_push_down: bool = False
    #: Whether the connector reads metadata columns (its scan then names its projection).
    reads_metadata: bool = False
    #: The table's physical columns, before projection push-down.
    columns: int = 0
    #: What the source was asked for besides its columns (``metadata=[rowtime]``).
    extras: tuple[str, ...] = ()
    #: Whether the source emits every row kind (a changelog stream), not only inserts.
    all_kinds: bool = False
    #: The rows the connector reports (Flink's table statistics; None: unknown).
    row_count: int | None = None

    def terms(self) -> list[tuple[str, str]]:
        return [("table", "[" + ", ".join(self.path + self.extras) + "]")]


@dataclass(eq=False)
class LogicalProject(RelNode):
    exprs: list[Rex] = field(default_factory=list)

    def terms(self) -> list[tuple[str, str]]:
        return [(f.name, digest.rex(e)) for f, e in zip(self.fields, self.exprs, strict=True)]


@dataclass(eq=False)
class LogicalFilter(RelNode):
    condition: Rex | None = None

    def terms(self) -> list[tuple[str, str]]:
        assert self.condition is not None
        return [("condition", digest.rex(self.condition))]


@dataclass(eq=False)
class LogicalAggregate(RelNode):
    group: list[int] = field(default_factory=list)
    calls: list[AggCall] = field(default_factory=list)

    def terms(self) -> list[tuple[str, str]]:
        return [("group", "{" + ", ".join(map(str, self.group)) + "}")] + [(c.name, c.digest()) for c in self.calls]


@dataclass(eq=False)
class LogicalJoin(RelNode):
    condition: Rex | None = None
    join_type: str = "inner"

    def terms(self) -> list[tuple[str, str]]:
        condition = "true" if self.condition is None else digest.rex(self.condition)
        return [("condition", condition), ("joinType", self.join_type)]


@dataclass(eq=False)
class LogicalValues(RelNode):
    rows: list[list[Literal]] = field(default_factory=list)

    def terms(self) -> list[tuple[str, str]]:
        return [("tuples", tuples(self.rows))]


@dataclass(eq=False)
class LogicalWatermarkAssigner(RelNode):
    rowtime: int = 0
    watermark: Rex | None = None

    def terms(self) -> list[tuple[str, str]]:
        assert self.watermark is not None
        return [("rowtime", self.names[self.rowtime]), ("watermark", digest.rex(self.watermark))]


@dataclass(frozen=True)
class WindowSpec:
    """A window TVF's arguments: kind, time column, durations (milliseconds), partition keys."""

    kind: str
    time_column: int
    time_name: str
    sizes: tuple[Literal, ...]
    partition: tuple[int, ...] = ()


@dataclass(eq=False)
class LogicalTableFunctionScan(RelNode):
    window: WindowSpec | None = None

    def terms(self) -> list[tuple[str, str]]:
        assert self.window is not None
        w = self.window
        table = "TABLE(#0)"
        if w.partition:
            table += " PARTITION BY(" + ", ".join(f"${p}" for p in w.partition) + ")"
        args = [table, f"DESCRIPTOR(_UTF-16LE'{w.time_name}')"] + [digest.rex(s) for s in w.sizes]
        return [("invocation", f"{w.kind}({', '.join(args)})"), ("rowType", row_type(self.fields))]


@dataclass(eq=False)
class LogicalSort(RelNode):
    keys: list[tuple[int, bool, bool]] = field(default_factory=list)
    offset: int | None = None
    fetch: int | None = None

    def terms(self) -> list[tuple[str, str]]:
        terms = [(f"sort{i}", f"${k}") for i, (k, _, _) in enumerate(self.keys)]
        terms += [(f"dir{i}", direction(desc, nulls_last)) for i, (_, desc, nulls_last) in enumerate(self.keys)]
        if self.offset is not None:
            terms.append(("offset", str(self.offset)))
        if self.fetch is not None:
            terms.append(("fetch", str(self.fetch)))
        return terms


def direction(descending: bool, nulls_last: bool) -> str:
    """Calcite's collation digest: the null direction is named where it is not the direction's
    own (nulls last ascending, first descending); Flink's defaults are the opposite."""
    if descending:
        return "DESC-nulls-last" if nulls_last else "DESC"
    return "ASC" if nulls_last else "ASC-nulls-first"


@dataclass(eq=False)
class LogicalUnion(RelNode):
    all: bool = True

    def terms(self) -> list[tuple[str, str]]:
        return [("all", "true" if self.all else "false")]


@dataclass(eq=False)
class LogicalSink(RelNode):
    table: str = ""
    connector: str = ""
    #: The kinds of rows the sink consumes (its connector's changelog mode).
    accepts: tuple[str, ...] = ("I", "UB", "UA", "D")

    def terms(self) -> list[tuple[str, str]]:
        return [("table", self.table), ("fields", ", ".join(self.names))]


@dataclass(eq=False)
class LogicalCalc(RelNode):
    """Flink's logical Calc: projections and an optional condition over one input (a Project and a
    Filter merged, as FlinkLogicalCalc)."""

    projects: list[Rex] = field(default_factory=list)
    condition: Rex | None = None

    @property
    def is_identity(self) -> bool:
        width = len(self.inputs[0].fields)
        return (
            self.condition is None
            and len(self.projects) == width
            and all(isinstance(p, InputRef) and p.index == i for i, p in enumerate(self.projects))
        )


@dataclass(eq=False)
class LogicalRank(RelNode):
    """ROW_NUMBER() over a partition, filtered to a range of rank numbers (FlinkLogicalRank)."""

    partition: tuple[int, ...] = ()
    order: list[tuple[int, bool, bool]] = field(default_factory=list)
    rank_start: int = 1
    rank_end: int = 1
    output_rank: bool = False
    function: str = "ROW_NUMBER"


@dataclass(eq=False)
class LogicalWindow(RelNode):
    """OVER calls of one window over their input (Calcite's LogicalWindow): the input's fields,
    then one field per call (``w0$o0``)."""

    partition: tuple[int, ...] = ()
    order: list[tuple[int, bool, bool]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
