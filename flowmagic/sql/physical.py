"""Flink's physical relational nodes (``StreamPhysical*`` / ``BatchPhysical*``) and how the
Optimized Physical Plan and the Optimized Execution Plan print them.

A node prints its attributes in one of three styles: ``stream`` (Calcite digests with character
sets), ``batch`` (digests without them, as the batch planner prints its physical plan) and
``exec`` (the ExecNode description: infix expressions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowmagic.sql import digest, exec_description
from flowmagic.sql.logical import AggCall, Field, WindowSpec, row_type, tuples
from flowmagic.sql.rex import Call, InputRef, Literal, Rex
from flowmagic.sql.types import SqlType

_MODES = ("I", "UB", "UA", "D")


def expression(rex: Rex, names: list[str], style: str) -> str:
    if style == "exec":
        return exec_description.rex(rex, names)
    return digest.rex(rex, names, charset=style == "stream")


def duration(millis: int) -> str:
    """A window size as Flink prints durations (its highest exact unit)."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if millis % size == 0 and millis >= size:
            return f"{millis // size} {unit}"
    return f"{millis} ms"


@dataclass(eq=False)
class PhysicalNode:
    inputs: list[PhysicalNode]
    fields: list[Field]
    #: Changelog kinds this node emits (set by the changelog inference).
    changelog: tuple[str, ...] = ()
    #: Output field sets that are unique keys.
    unique_keys: list[frozenset[int]] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def input_names(self, i: int = 0) -> list[str]:
        return self.inputs[i].names

    def name(self, exec_plan: bool) -> str:
        return type(self).__name__

    def terms(self, style: str) -> list[tuple[str, str]]:
        raise NotImplementedError

    def physical_terms(self, streaming: bool, changelog: bool) -> list[tuple[str, str]]:
        terms = self.terms("stream" if streaming else "batch")
        if changelog:
            modes = ",".join(m for m in _MODES if m in self.changelog) or "NONE"
            terms.append(("changelogMode", modes))
        return terms

    def exec_terms(self) -> list[tuple[str, str]]:
        return self.terms("exec")


def pushed_filter(rex: Rex, names: list[str]) -> str:
    """A filter pushed into a source, as Flink's expressions print it: AND and OR nest in pairs
    (``and(and(a, b), c)``), everything else is Calcite's digest."""
    if isinstance(rex, Call) and rex.operator in ("AND", "OR") and len(rex.operands) > 1:
        word = "and" if rex.operator == "AND" else "OR"
        text = pushed_filter(rex.operands[0], names)
        for operand in rex.operands[1:]:
            text = f"{word}({text}, {pushed_filter(operand, names)})"
        return text
    return digest.rex(rex, names)


@dataclass(eq=False)
class TableSourceScan(PhysicalNode):
    path: tuple[str, ...] = ()
    filter: Rex | None = None
    #: Whether the source reports projections and metadata in its name (the filesystem source).
    reads_metadata: bool = False
    columns: int = 0
    #: What the source was asked for besides its columns (``metadata=[rowtime]``,
    #: ``watermark=[SOURCE_WATERMARK()]``).
    extras: tuple[str, ...] = ()
    #: Whether the source emits every row kind (a changelog stream), not only inserts.
    all_kinds: bool = False
    #: The rows the connector reports (None: unknown).
    row_count: int | None = None

    def terms(self, style: str) -> list[tuple[str, str]]:
        table = list(self.path) + list(self.extras)
        if self.filter is not None:
            table.append(f"filter=[{pushed_filter(self.filter, self.names)}]")
        if self.reads_metadata and len(self.fields) < self.columns:
            table += [f"project=[{', '.join(self.names)}]", "metadata=[]"]
        return [("table", "[" + ", ".join(table) + "]"), ("fields", ", ".join(self.names))]


@dataclass(eq=False)
class DropUpdateBefore(PhysicalNode):
    """Drops a changelog source's UPDATE_BEFORE rows that no consumer needs."""

    def terms(self, style: str) -> list[tuple[str, str]]:
        return []


@dataclass(eq=False)
class Values(PhysicalNode):
    rows: list[list[Literal]] = field(default_factory=list)
    streaming: bool = True

    def terms(self, style: str) -> list[tuple[str, str]]:
        if not self.streaming:
            return [("tuples", tuples(self.rows)), ("values", ", ".join(self.names))]
        if style == "exec":
            return [("tuples", tuples(self.rows))]
        return [("type", row_type(self.fields)), ("tuples", tuples(self.rows))]


def select_list(projects: list[Rex], names: list[str], input_names: list[str], style: str) -> str:
    items = []
    for rex, name in zip(projects, names, strict=True):
        if isinstance(rex, InputRef) and input_names[rex.index] == name:
            items.append(name)
        else:
            items.append(f"{expression(rex, input_names, style)} AS {name}")
    return ", ".join(items)


@dataclass(eq=False)
class Calc(PhysicalNode):
    projects: list[Rex] = field(default_factory=list)
    condition: Rex | None = None

    def terms(self, style: str) -> list[tuple[str, str]]:
        terms = [("select", select_list(self.projects, self.names, self.input_names(), style))]
        if self.condition is not None:
            terms.append(("where", expression(self.condition, self.input_names(), style)))
        return terms


@dataclass(eq=False)
class Exchange(PhysicalNode):
    distribution: str = "hash"
    keys: tuple[int, ...] = ()

    def terms(self, style: str) -> list[tuple[str, str]]:
        if self.distribution == "hash":
            names = self.input_names()
            return [("distribution", "hash[" + ", ".join(names[k] for k in self.keys) + "]")]
        return [("distribution", self.distribution)]


def agg_call(call: AggCall, names: list[str], retract: bool = False) -> str:
    """An aggregate call as plans print it; over an updating input, Flink's retracting
    function (``COUNT_RETRACT``)."""
    inner = ", ".join(names[a] for a in call.args) if call.args else "*"
    function = f"{call.function}_RETRACT" if retract else call.function
    text = f"{function}({'DISTINCT ' if call.distinct else ''}{inner})"
    return text if call.filter is None else f"{text} FILTER {names[call.filter]}"


@dataclass(eq=False)
class GroupAggregate(PhysicalNode):
    grouping: tuple[int, ...] = ()
    calls: list[AggCall] = field(default_factory=list)

    def terms(self, style: str) -> list[tuple[str, str]]:
        names = self.input_names()
        terms = []
        if self.grouping:
            terms.append(("groupBy", ", ".join(names[g] for g in self.grouping)))
        retract = any(mode != "I" for mode in self.inputs[0].changelog)
        select = [names[g] for g in self.grouping] + [f"{agg_call(c, names, retract)} AS {c.name}" for c in self.calls]
        terms.append(("select", ", ".join(select)))
        return terms


def window_text(window: WindowSpec, time_or_slice: str, value: str, names: list[str] | None = None) -> str:
    sizes = [duration(int(str(s.value))) for s in window.sizes]
    labels = {"TUMBLE": ["size"], "HOP": ["slide", "size"], "CUMULATE": ["step", "max_size"], "SESSION": ["gap"]}
    parts = [f"{time_or_slice}=[{value}]"]
    pairs = dict(zip(labels[window.kind], sizes, strict=False))
    order = {"TUMBLE": ["size"], "HOP": ["size", "slide"], "CUMULATE": ["max_size", "step"], "SESSION": ["gap"]}
    parts += [f"{label}=[{pairs[label]}]" for label in order[window.kind]]
    if window.partition and names is not None:
        parts.append("partition keys=[" + ", ".join(names[p] for p in window.partition) + "]")
    return f"{window.kind}({', '.join(parts)})"


def _group_by(grouping: tuple[int, ...], names: list[str]) -> list[tuple[str, str]]:
    return [("groupBy", ", ".join(names[g] for g in grouping))] if grouping else []


LOCAL_NAMES = {"COUNT": "count", "SUM": "sum", "$SUM0": "sum", "MIN": "min", "MAX": "max"}
_WINDOW_PROPERTIES = {"window_start": "start", "window_end": "end", "window_time": "rowtime"}


def local_name(call: AggCall, index: int) -> str:
    if call.function == "COUNT" and not call.args:
        return f"count1${index}"
    return f"{LOCAL_NAMES[call.function]}${index}"


@dataclass(eq=False)
class LocalWindowAggregate(PhysicalNode):
    grouping: tuple[int, ...] = ()
    calls: list[AggCall] = field(default_factory=list)
    window: WindowSpec | None = None

    def terms(self, style: str) -> list[tuple[str, str]]:
        assert self.window is not None
        names = self.input_names()
        select = [names[g] for g in self.grouping]
        select += [f"{agg_call(c, names)} AS {local_name(c, i)}" for i, c in enumerate(self.calls)]
        select.append("slice_end('w$) AS $slice_end")
        return [
            *_group_by(self.grouping, names),
            ("window", window_text(self.window, "time_col", names[self.window.time_column])),
            ("select", ", ".join(select)),
        ]


@dataclass(eq=False)
class GlobalWindowAggregate(PhysicalNode):
    grouping: tuple[int, ...] = ()
    calls: list[AggCall] = field(default_factory=list)
    window: WindowSpec | None = None
    properties: tuple[str, ...] = ()

    def terms(self, style: str) -> list[tuple[str, str]]:
        assert self.window is not None
        names = self.input_names()
        select = [names[g] for g in self.grouping]
        select += [f"{c.function}({local_name(c, i)}) AS {c.name}" for i, c in enumerate(self.calls)]
        select += [f"{_WINDOW_PROPERTIES[p]}('w$) AS {p}" for p in self.properties]
        return [
            *_group_by(self.grouping, names),
            ("window", window_text(self.window, "slice_end", "$slice_end")),
            ("select", ", ".join(select)),
        ]


@dataclass(eq=False)
class WindowAggregate(PhysicalNode):
    """A one-phase window aggregate (session windows, which cannot be sliced)."""

    grouping: tuple[int, ...] = ()
    calls: list[AggCall] = field(default_factory=list)
    window: WindowSpec | None = None
    properties: tuple[str, ...] = ()

    def terms(self, style: str) -> list[tuple[str, str]]:
        assert self.window is not None
        names = self.input_names()
        select = [names[g] for g in self.grouping]
        select += [f"{agg_call(c, names)} AS {c.name}" for c in self.calls]
        select += [f"{_WINDOW_PROPERTIES[p]}('w$) AS {p}" for p in self.properties]
        return [
            *_group_by(self.grouping, names),
            ("window", window_text(self.window, "time_col", names[self.window.time_column], names)),
            ("select", ", ".join(select)),
        ]


@dataclass(eq=False)
class WatermarkAssigner(PhysicalNode):
    rowtime: int = 0
    watermark: Rex | None = None

    def terms(self, style: str) -> list[tuple[str, str]]:
        assert self.watermark is not None
        names = self.input_names()
        return [("rowtime", names[self.rowtime]), ("watermark", expression(self.watermark, names, style))]


_JOIN_TYPES = {"inner": "InnerJoin", "left": "LeftOuterJoin", "right": "RightOuterJoin", "full": "FullOuterJoin"}


@dataclass(eq=False)
class Join(PhysicalNode):
    join_type: str = "inner"
    condition: Rex | None = None

    def input_spec(self, side: int) -> str:
        """Flink's JoinInputSideSpec: whether the side's join key contains one of its unique
        keys, else whether it has one."""
        keys = self.inputs[side].unique_keys
        if not keys:
            return "NoUniqueKey"
        join_key = self.join_keys(side)
        return "JoinKeyContainsUniqueKey" if any(key <= join_key for key in keys) else "HasUniqueKey"

    def join_keys(self, side: int) -> frozenset[int]:
        """The fields of input ``side`` that the condition's equalities join on."""
        width = len(self.inputs[0].fields)
        condition = self.condition
        conjuncts = (
            list(condition.operands) if isinstance(condition, Call) and condition.operator == "AND" else [condition]
        )
        fields: set[int] = set()
        for conjunct in conjuncts:
            if isinstance(conjunct, Call) and conjunct.operator == "=" and len(conjunct.operands) == 2:
                a, b = conjunct.operands
                if isinstance(a, InputRef) and isinstance(b, InputRef):
                    low, high = sorted((a.index, b.index))
                    if low < width <= high:
                        fields.add(low if side == 0 else high - width)
        return frozenset(fields)

    def terms(self, style: str) -> list[tuple[str, str]]:
        where = "true" if self.condition is None else expression(self.condition, self.names, style)
        return [
            ("joinType", _JOIN_TYPES[self.join_type]),
            ("where", where),
            ("select", ", ".join(self.names)),
            ("leftInputSpec", self.input_spec(0)),
            ("rightInputSpec", self.input_spec(1)),
        ]


@dataclass(eq=False)
class IntervalJoin(PhysicalNode):
    join_type: str = "inner"
    condition: Rex | None = None
    rowtime: bool = True
    lower: int = 0
    upper: int = 0
    left_time: int = 0
    right_time: int = 0

    def terms(self, style: str) -> list[tuple[str, str]]:
        assert self.condition is not None
        bounds = (
            f"isRowTime={'true' if self.rowtime else 'false'}, leftLowerBound={self.lower}, "
            f"leftUpperBound={self.upper}, leftTimeIndex={self.left_time}, rightTimeIndex={self.right_time}"
        )
        return [
            ("joinType", _JOIN_TYPES[self.join_type]),
            ("windowBounds", bounds),
            ("where", expression(self.condition, self.names, style)),
            ("select", ", ".join(self.names)),
        ]


def order_text(keys: list[tuple[int, bool, bool]], fields: list[Field]) -> str:
    """Sort keys as Flink prints them; an event-time key is marked ``ROWTIME``."""
    parts = []
    for k, desc, _ in keys:
        rowtime = "ROWTIME " if fields[k].type.time_attribute == "ROWTIME" else ""
        parts.append(f"{rowtime}{fields[k].name} {'DESC' if desc else 'ASC'}")
    return ", ".join(parts)


@dataclass(eq=False)
class Rank(PhysicalNode):
    partition: tuple[int, ...] = ()
    order: list[tuple[int, bool, bool]] = field(default_factory=list)
    rank_start: int = 1
    rank_end: int = 1
    output_rank: bool = False
    strategy: str = "AppendFastStrategy"

    @property
    def keeps_first_row(self) -> bool:
        """A deduplication keeping each key's first row: it never retracts what it emitted."""
        return self.deduplicate is not None and not self.order[0][1]

    @property
    def deduplicate(self) -> SqlType | None:
        """The time attribute a ROW_NUMBER = 1 on a time attribute deduplicates on, if it is one."""
        if self.rank_start != 1 or self.rank_end != 1 or self.output_rank or len(self.order) != 1:
            return None
        type_ = self.inputs[0].fields[self.order[0][0]].type
        return type_ if type_.time_attribute else None

    def name(self, exec_plan: bool) -> str:
        return "Deduplicate" if exec_plan and self.deduplicate is not None else "Rank"

    def exec_terms(self) -> list[tuple[str, str]]:
        time = self.deduplicate
        if time is None:
            return self.terms("exec")
        names = self.input_names()
        last = self.order[0][1]
        return [
            ("keep", "LastRow" if last else "FirstRow"),
            ("key", ", ".join(names[p] for p in self.partition)),
            ("order", time.time_attribute or ""),
            ("outputInsertOnly", "false" if last else "true"),
        ]

    def terms(self, style: str) -> list[tuple[str, str]]:
        names = self.input_names()
        return [
            ("strategy", self.strategy),
            ("rankType", "ROW_NUMBER"),
            ("rankRange", f"rankStart={self.rank_start}, rankEnd={self.rank_end}"),
            ("partitionBy", ", ".join(names[p] for p in self.partition)),
            ("orderBy", order_text(self.order, self.inputs[0].fields)),
            ("select", ", ".join(self.names)),
        ]


@dataclass(eq=False)
class BatchRank(PhysicalNode):
    """The batch planner's Rank over sorted partitions: a local phase, then a global one."""

    function: str = "RANK"
    partition: tuple[int, ...] = ()
    order: list[tuple[int, bool, bool]] = field(default_factory=list)
    rank_start: int = 1
    rank_end: int = 1
    is_global: bool = True

    def name(self, exec_plan: bool) -> str:
        return "Rank"

    def terms(self, style: str) -> list[tuple[str, str]]:
        names = self.input_names()
        return [
            ("rankType", self.function),
            ("rankRange", f"rankStart={self.rank_start}, rankEnd={self.rank_end}"),
            ("partitionBy", ", ".join(names[p] for p in self.partition)),
            ("orderBy", order_text(self.order, self.inputs[0].fields)),
            ("global", "true" if self.is_global else "false"),
            ("select", ", ".join(self.names)),
        ]


@dataclass(eq=False)
class SortLimit(PhysicalNode):
    keys: list[tuple[int, bool, bool]] = field(default_factory=list)
    offset: int = 0
    fetch: int = 0
    strategy: str = "AppendFastStrategy"
    #: Batch only: the global phase after the single exchange, or the local one before it.
    batch_global: bool | None = None

    def terms(self, style: str) -> list[tuple[str, str]]:
        terms = [
            ("orderBy", order_text(self.keys, self.inputs[0].fields)),
            ("offset", str(self.offset)),
            ("fetch", str(self.fetch)),
        ]
        if self.batch_global is None:
            return [*terms, ("strategy", self.strategy)]
        return [*terms, ("global", "true" if self.batch_global else "false")]


@dataclass(eq=False)
class Union(PhysicalNode):
    def terms(self, style: str) -> list[tuple[str, str]]:
        return [("all", "true"), ("union", ", ".join(self.names))]


@dataclass(eq=False)
class Sink(PhysicalNode):
    table: str = ""
    connector: str = ""
    #: The kinds of rows the sink consumes (its connector's changelog mode).
    accepts: tuple[str, ...] = ("I", "UB", "UA", "D")

    def terms(self, style: str) -> list[tuple[str, str]]:
        return [("table", self.table), ("fields", ", ".join(self.names))]


@dataclass(eq=False)
class BatchAggregate(PhysicalNode):
    """Batch aggregation: hash- or sort-based, a local phase (``Partial_*`` accumulators) or the
    global phase merging them (``Final_*``)."""

    strategy: str = "Hash"
    local: bool = False
    #: A global phase merging local accumulators (``isMerge=[true]``), else a one-phase aggregate.
    merge: bool = True
    grouping: tuple[int, ...] = ()
    calls: list[AggCall] = field(default_factory=list)

    def name(self, exec_plan: bool) -> str:
        return f"{'Local' if self.local else ''}{self.strategy}Aggregate"

    def terms(self, style: str) -> list[tuple[str, str]]:
        names = self.input_names()
        keys = [names[g] for g in self.grouping]
        if self.local:
            select = keys + [f"Partial_{agg_call(c, names)} AS {local_name(c, i)}" for i, c in enumerate(self.calls)]
            return [*_group_by(self.grouping, names), ("select", ", ".join(select))]
        if not self.merge:
            select = keys + [f"{agg_call(c, names)} AS {c.name}" for c in self.calls]
            return [("isMerge", "false"), *_group_by(self.grouping, names), ("select", ", ".join(select))]
        select = keys + [f"Final_{c.function}({local_name(c, i)}) AS {c.name}" for i, c in enumerate(self.calls)]
        return [("isMerge", "true"), *_group_by(self.grouping, names), ("select", ", ".join(select))]


@dataclass(eq=False)
class Expand(PhysicalNode):
    """Every input row once per projection list (Calcite's expand-distinct rewrite), the
    projection's number in the expand-id field ``$e``."""

    projects: list[list[Rex]] = field(default_factory=list)

    def terms(self, style: str) -> list[tuple[str, str]]:
        # Flink prints a projection's NULL untyped (``null AS k``), unlike other expressions.
        rows = []
        for projects in self.projects:
            items = [
                f"null AS {name}"
                if isinstance(rex, Literal) and rex.value is None
                else select_list([rex], [name], self.input_names(), style)
                for rex, name in zip(projects, self.names, strict=True)
            ]
            rows.append("{" + ", ".join(items) + "}")
        return [("projects", ", ".join(rows))]


@dataclass(eq=False)
class Sort(PhysicalNode):
    keys: list[tuple[int, bool, bool]] = field(default_factory=list)

    def terms(self, style: str) -> list[tuple[str, str]]:
        return [("orderBy", order_text(self.keys, self.inputs[0].fields))]


@dataclass(eq=False)
class WindowTableFunction(PhysicalNode):
    window: WindowSpec | None = None

    def terms(self, style: str) -> list[tuple[str, str]]:
        assert self.window is not None
        names = self.input_names()
        return [("window", window_text(self.window, "time_col", names[self.window.time_column], names))]


@dataclass(eq=False)
class NestedLoopJoin(PhysicalNode):
    """Batch join that loops over a built side (broadcast to every probe subtask, or both sides
    gathered to one subtask for a full outer join)."""

    join_type: str = "inner"
    condition: Rex | None = None
    build: str = "right"

    def terms(self, style: str) -> list[tuple[str, str]]:
        where = "true" if self.condition is None else expression(self.condition, self.names, style)
        return [
            ("joinType", _JOIN_TYPES[self.join_type]),
            ("where", where),
            ("select", ", ".join(self.names)),
            ("build", self.build),
        ]


@dataclass(eq=False)
class HashJoin(PhysicalNode):
    """Batch join hashing its ``build`` side, both inputs hashed on the join keys. ``adaptive``:
    Flink's AdaptiveJoinProcessor left it for the runtime to turn into a broadcast join, so the
    execution plan prints it as an AdaptiveJoin of the original shuffle hash join."""

    join_type: str = "inner"
    condition: Rex | None = None
    build: str = "left"
    adaptive: bool = False

    def name(self, exec_plan: bool) -> str:
        return "AdaptiveJoin" if exec_plan and self.adaptive else "HashJoin"

    def terms(self, style: str) -> list[tuple[str, str]]:
        where = "true" if self.condition is None else expression(self.condition, self.names, style)
        original = [("originalJoin", "ShuffleHashJoin")] if style == "exec" and self.adaptive else []
        return [
            *original,
            ("joinType", _JOIN_TYPES[self.join_type]),
            ("where", where),
            ("select", ", ".join(self.names)),
            ("build", self.build),
        ]


@dataclass(eq=False)
class OverAggregate(PhysicalNode):
    """Batch OVER aggregation over partitions sorted by their keys."""

    partition: tuple[int, ...] = ()
    order: list[tuple[int, bool, bool]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def terms(self, style: str) -> list[tuple[str, str]]:
        names = self.input_names()
        width = len(names)
        windows = ", ".join(
            f"{call}(*) AS {self.names[width + i]} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
            for i, call in enumerate(self.calls)
        )
        return [
            ("partitionBy", ", ".join(names[p] for p in self.partition)),
            ("orderBy", order_text(self.order, self.inputs[0].fields)),
            ("window#0", windows),
            ("select", ", ".join(self.names)),
        ]
